/**
 * A StorageDriver over a local directory: the embedded default of the dev stack, the demo and the
 * tests (no object store to run). Files follow the layout of object-keys.ts under `directory`.
 *
 * - Writes are atomic: a temp file in the destination directory, fsynced, then renamed over the
 *   final name, so a reader never sees half a payload and a crash leaves at most a stray temp file.
 * - Claims are untrusted (they come from history): only keys of our layout are followed, the
 *   resolved path must stay inside `directory`, and the bytes must hash to the claimed value.
 * - Files and directories are private to the user (0600/0700): with encryption off they hold
 *   plaintext, like the dev server's own database.
 *
 * Only one machine can read these files: workers on several hosts need the S3 driver.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { StorageDriverClaim, type Payload, type StorageDriverRetrieveContext, type StorageDriverStoreContext } from '@temporalio/common';
import { PayloadClaimRejectedError, PayloadStoreOperationError, StoredPayloadIntegrityError, StoredPayloadNotFoundError } from './errors.js';
import { checkClaim, claimDataFor, payloadKey, sha256Hex, workflowKeyPrefix, workflowKeySuffix } from './object-keys.js';
import type { DeleteWorkflowPayloadsOptions, PayloadStoreDriver } from './payload-store-driver.js';
import { deserializePayload, serializePayload } from './stored-payload.js';

export const LOCAL_DIRECTORY_DRIVER_NAME = 'local-directory';
export const LOCAL_DIRECTORY_DRIVER_TYPE = 'aggregation-connections.local-directory';

export interface LocalDirectoryDriverOptions {
  /** Created on first store if missing; relative paths resolve against the working directory. */
  readonly directory: string;
  /** The routing name written into each reference (default "local-directory"). */
  readonly name?: string | undefined;
}

export class LocalDirectoryStorageDriver implements PayloadStoreDriver {
  readonly name: string;
  readonly type = LOCAL_DIRECTORY_DRIVER_TYPE;
  /** Absolute. */
  readonly directory: string;

  constructor({ directory, name = LOCAL_DIRECTORY_DRIVER_NAME }: LocalDirectoryDriverOptions) {
    if (directory.trim() === '') throw new TypeError('LocalDirectoryStorageDriver: the directory must not be empty');
    this.directory = resolve(directory);
    this.name = name;
  }

  get location(): string {
    return this.directory;
  }

  async store(context: StorageDriverStoreContext, payloads: Payload[]): Promise<StorageDriverClaim[]> {
    const writes = new Map<string, Promise<void>>();
    return Promise.all(
      payloads.map(async (payload) => {
        const { bytes, sha256 } = serializePayload(payload);
        const key = payloadKey(context.target, sha256);
        // The same payload twice in one batch is written once.
        let write = writes.get(key);
        if (!write) {
          write = this.write(key, bytes, context.abortSignal);
          writes.set(key, write);
        }
        await write;
        return new StorageDriverClaim(claimDataFor(key, sha256));
      }),
    );
  }

  async retrieve(context: StorageDriverRetrieveContext, claims: StorageDriverClaim[]): Promise<Payload[]> {
    return Promise.all(claims.map((claim) => this.read(claim, context.abortSignal)));
  }

  async deleteWorkflowPayloads(workflowId: string, { namespace, abortSignal }: DeleteWorkflowPayloadsOptions = {}): Promise<number> {
    const prefixes =
      namespace === undefined
        ? (await this.namespaceDirectories()).map((segment) => `${segment}/${workflowKeySuffix(workflowId)}`)
        : [workflowKeyPrefix(namespace, workflowId)];
    let deleted = 0;
    for (const prefix of prefixes) {
      abortSignal?.throwIfAborted();
      const path = join(this.directory, prefix);
      try {
        const files = await readdir(path, { withFileTypes: true });
        await rm(path, { recursive: true, force: true });
        deleted += files.filter((entry) => entry.isFile() && !entry.name.startsWith('.')).length;
      } catch (error) {
        if (isNotFound(error)) continue;
        throw new PayloadStoreOperationError(this.name, this.location, 'delete', prefix, { cause: error });
      }
    }
    return deleted;
  }

  close(): void {
    // Nothing held open between calls.
  }

  private async write(key: string, bytes: Uint8Array, abortSignal: AbortSignal | undefined): Promise<void> {
    abortSignal?.throwIfAborted();
    const path = join(this.directory, key);
    // Written even when the file exists: the same name holds the same bytes, and rewriting heals a damaged copy.
    const temp = join(dirname(path), `.${key.slice(key.lastIndexOf('/') + 1)}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      await mkdir(dirname(path), { recursive: true, mode: 0o700 });
      const file = await open(temp, 'wx', 0o600);
      try {
        await file.writeFile(bytes);
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(temp, path);
    } catch (error) {
      await rm(temp, { force: true });
      throw new PayloadStoreOperationError(this.name, this.location, 'store', key, { cause: error });
    }
  }

  private async read(claim: StorageDriverClaim, abortSignal: AbortSignal | undefined): Promise<Payload> {
    const checked = checkClaim(claim.claimData, '');
    if (typeof checked === 'string') throw new PayloadClaimRejectedError(this.name, this.location, checked, claim.claimData);
    const path = resolve(this.directory, checked.relativeKey);
    // The layout check already excludes "..", "/" and hidden names; this is the second line of defence.
    if (!path.startsWith(this.directory + sep)) {
      throw new PayloadClaimRejectedError(this.name, this.location, `key ${checked.key} resolves outside the directory`, claim.claimData);
    }
    let bytes: Buffer;
    try {
      bytes = await readFile(path, { signal: abortSignal });
    } catch (error) {
      if (isNotFound(error)) throw new StoredPayloadNotFoundError(this.name, this.location, checked.key, { cause: error });
      throw new PayloadStoreOperationError(this.name, this.location, 'retrieve', checked.key, { cause: error });
    }
    const actual = sha256Hex(bytes);
    if (actual !== checked.sha256) throw new StoredPayloadIntegrityError(this.name, this.location, checked.key, checked.sha256, actual);
    return deserializePayload(bytes);
  }

  private async namespaceDirectories(): Promise<string[]> {
    try {
      const entries = await readdir(this.directory, { withFileTypes: true });
      return entries.filter((entry) => entry.isDirectory() && !entry.name.startsWith('.')).map((entry) => entry.name);
    } catch (error) {
      if (isNotFound(error)) return [];
      throw new PayloadStoreOperationError(this.name, this.location, 'delete', '', { cause: error });
    }
  }
}

function isNotFound(error: unknown): boolean {
  return error instanceof Error && 'code' in error && error.code === 'ENOENT';
}

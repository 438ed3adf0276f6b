/**
 * security:check's attacks across tenants (keys per tenant): a reader granted one tenant's key tries
 * another tenant's payloads, read from the raw history directly and through a console codec endpoint
 * holding its credentials; then one tenant's key is destroyed (the lender forgotten) and its payloads
 * must fail by name while the other tenant's still read. Each reader's own tenant is its control: a
 * refusal only counts when the same reader opens its own payloads. The same isolation in static mode
 * (PAYLOAD_TENANT_KEYS_DIR): a reader given one tenant's key file alone.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { AuditTrail } from '../../src/audit/audit-trail.js';
import { FileAuditStore } from '../../src/audit/file-audit-store.js';
import { createConsoleServer } from '../../src/console/app.js';
import { toJson } from '../../src/console/codec.js';
import type { ConnectionsClient } from '../../src/client/index.js';
import { EncryptionCodec } from '../../src/codec/encryption-codec.js';
import { keySourceFor } from '../../src/codec/key-provider.js';
import { KeyDestroyedError } from '../../src/codec/payload-errors.js';
import { isEncrypted } from '../../src/codec/payload-format.js';
import { passesThroughCodec, payloadsIn } from '../lib/history-payloads.js';
import type { AttackResult } from './attacks.js';

/** The sealed payloads of a workflow's raw history (what Temporal stores), as the codec sees them. */
export async function sealedPayloadsOf(raw: Client, workflowId: string): Promise<Payload[]> {
  const history = await raw.workflow.getHandle(workflowId).fetchHistory();
  return payloadsIn(history.events ?? [])
    .filter(passesThroughCodec)
    .map(({ payload }) => payload)
    .filter((payload) => isEncrypted(payload));
}

/** How many of `payloads` the codec opens, and the first refusal's name. */
async function opens(codec: EncryptionCodec, payloads: readonly Payload[]): Promise<{ opened: number; refusal: string | undefined }> {
  let opened = 0;
  let refusal: string | undefined;
  for (const payload of payloads) {
    try {
      await codec.decode([payload]);
      opened += 1;
    } catch (error) {
      refusal ??= (error instanceof Error ? `${error.name}: ${error.message}` : String(error)).replace(/\s+/g, ' ').slice(0, 160);
    }
  }
  return { opened, refusal };
}

/** A tenant's reader on another tenant's history, read directly: refused when it opens all of its own and none of the other's. */
export async function readerOnOtherTenant(name: string, reader: EncryptionCodec, own: readonly Payload[], other: readonly Payload[]): Promise<AttackResult> {
  const control = await opens(reader, own);
  const attack = await opens(reader, other);
  const refused = own.length > 0 && control.opened === own.length && other.length > 0 && attack.opened === 0;
  const detail = `opened ${control.opened}/${own.length} of its own tenant's payloads and ${attack.opened}/${other.length} of the other's${attack.refusal ? ` (the KMS: ${attack.refusal})` : ''}`;
  return { name, refused, detail };
}

/**
 * The same reader behind a console's codec endpoint (what the Web UI asks): every payload of the other
 * tenant comes back as a state that names why (not-permitted), none as its content.
 */
export async function otherTenantThroughCodec(
  name: string,
  connections: ConnectionsClient,
  reader: EncryptionCodec,
  other: readonly Payload[],
): Promise<AttackResult> {
  const token = `security-${Date.now().toString(36)}`;
  const auditDir = await mkdtemp(join(tmpdir(), 'security-audit-'));
  const audit = new AuditTrail(new FileAuditStore(join(auditDir, 'audit.jsonl')));
  const server = createConsoleServer({ audit, connections, token, payloadCodecs: [reader], codecCorsOrigins: [] });
  try {
    const url = (await server.listen(0, '127.0.0.1')).url;
    const body = JSON.stringify({ payloads: other.map(toJson) });
    const response = await fetch(`${url}/codec/decode`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body,
    });
    const answer = (await response.json().catch(() => ({}))) as { payloads?: { data?: string }[] };
    const states = (answer.payloads ?? []).map((payload) => {
      try {
        return (JSON.parse(Buffer.from(payload.data ?? '', 'base64').toString('utf8')) as { undecodable?: { state?: string } }).undecodable?.state;
      } catch {
        return undefined;
      }
    });
    const refused = response.status === 200 && states.length === other.length && states.every((state) => state === 'not-permitted');
    const counts = [...new Set(states)].map((state) => `${states.filter((each) => each === state).length} ${state ?? 'decoded'}`).join(', ');
    return { name, refused, detail: `HTTP ${response.status}; ${counts || 'no payloads'}` };
  } finally {
    await server.close();
    await audit.close();
    await rm(auditDir, { recursive: true, force: true });
  }
}

/** After a tenant's key is destroyed: every payload of it fails KeyDestroyedError, and the other tenant's all still open. */
export async function forgottenTenant(
  reader: EncryptionCodec,
  forgotten: readonly Payload[],
  kept: readonly Payload[],
): Promise<{ unreadable: boolean; othersReadable: boolean; detail: string }> {
  let destroyed = 0;
  for (const payload of forgotten) {
    try {
      await reader.decode([payload]);
    } catch (error) {
      if (error instanceof KeyDestroyedError) destroyed += 1;
    }
  }
  const still = await opens(reader, kept);
  return {
    unreadable: forgotten.length > 0 && destroyed === forgotten.length,
    othersReadable: still.opened === kept.length,
    detail: `${destroyed}/${forgotten.length} of the forgotten tenant's payloads fail KeyDestroyedError; ${still.opened}/${kept.length} of the other tenant's still open`,
  };
}

/**
 * Static mode's keys per tenant: a writer holding both tenants' key files seals payloads of each (in
 * their workflows' context, as a worker does); a reader given tenant A's file alone tries B's.
 */
export async function staticReaderOnOtherTenant(name: string, dir: string, tenants: readonly [string, string]): Promise<AttackResult> {
  const [a, b] = tenants;
  const writerDir = join(dir, 'writer');
  const readerDir = join(dir, 'reader-of-a');
  await mkdir(writerDir, { recursive: true, mode: 0o700 });
  await mkdir(readerDir, { recursive: true, mode: 0o700 });
  const lineOfA = `${a}-key:${randomBytes(32).toString('base64')}\n`;
  await writeFile(join(writerDir, `${a}.key`), lineOfA, { mode: 0o600 });
  await writeFile(join(writerDir, `${b}.key`), `${b}-key:${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
  await writeFile(join(readerDir, `${a}.key`), lineOfA, { mode: 0o600 });
  const product = { keyId: 'static-product', key: randomBytes(32) };
  const codecOn = (keysDir: string) => new EncryptionCodec(keySourceFor({ ...product, tenantKeyFiles: { dir: keysDir, createMissing: false } }));
  const writer = codecOn(writerDir);
  const sealedFor = (tenant: string) =>
    writer.encode([defaultPayloadConverter.toPayload({ password: 'static-tenant-secret' }), defaultPayloadConverter.toPayload({ answers: ['static'] })], {
      type: 'workflow',
      namespace: 'default',
      workflowId: `connection-${tenant}:app-1`,
    });
  return readerOnOtherTenant(name, codecOn(readerDir), await sealedFor(a), await sealedFor(b));
}

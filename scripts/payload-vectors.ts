/**
 * Cross-language payload vectors, TypeScript's side (Python's: python/tests/payload_vectors.py, the
 * same commands and file format): payloads this codec encrypts, in a JSON file the other side decodes.
 *   tsx scripts/payload-vectors.ts write <file>   encrypt the sample payloads with the codec of the environment
 *   tsx scripts/payload-vectors.ts read <file>    decrypt a file's payloads and check each equals its plain one
 * The codec is configured by the variables every process reads (PAYLOAD_ENCRYPTION_KEY, PAYLOAD_KEY_PROVIDER, ...).
 *   tsx scripts/payload-vectors.ts write-stored <file>   encrypt the samples and keep them in the payload store of the environment
 *   tsx scripts/payload-vectors.ts read-stored <file>    fetch a file's references from that store, decrypt, and compare
 * The codec is configured by the variables every process reads (PAYLOAD_ENCRYPTION_KEY, PAYLOAD_KEY_PROVIDER, ...), the store by PAYLOAD_STORE, ...
 * File: { writer, keyId, payloads: [{ name, plain, encoded }] }, each payload { metadata: { key: base64 }, data: base64 }.
 * A stored file: { writer, keyId, workflowId, payloads: [{ name, plain, reference, stored: { key, bytes } }] }: `reference` is the
 * payload history holds (an ExternalStorageReference), `stored` the object the store keeps (so a reader can put it in a fresh directory).
 * `read` prints one line per payload and exits 1 naming the first that does not match or cannot be decrypted (2 on a bad call).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { StorageDriverClaim, type Payload } from '@temporalio/common';
import { decodeReferencePayload, encodeReferencePayload } from '../src/sdk/internals.js';
import type { EncryptionCodec } from '../src/codec/encryption-codec.js';
import { encryptionCodecFor } from '../src/codec/data-converter.js';
import { payloadStoreDriverFor, type PayloadStoreDriver } from '../src/payload-store/index.js';
import { serializePayload } from '../src/payload-store/stored-payload.js';
import { loadPayloadCodecConfig, loadPayloadConfig } from '../src/settings/payload-codec.js';
import { settingsOrExit } from '../src/settings/load.js';

interface WirePayload {
  readonly metadata: Record<string, string>;
  readonly data: string;
}
interface VectorFile {
  readonly writer: string;
  readonly keyId: string;
  readonly payloads: readonly { readonly name: string; readonly plain: WirePayload; readonly encoded: WirePayload }[];
}

const text = (value: string): Uint8Array => new TextEncoder().encode(value);

/** The samples both sides write: JSON, unicode, an empty binary, a large payload, metadata beside the encoding. */
export function samplePayloads(): { name: string; payload: Payload }[] {
  const large = Array.from({ length: 200 }, (_, i) => ({ id: `txn-${i}`, amount: (i * 37) % 1000, memo: 'Everyday Checking' }));
  return [
    { name: 'json', payload: { metadata: { encoding: text('json/plain') }, data: text('{"password":"Everyday"}') } },
    { name: 'unicode', payload: { metadata: { encoding: text('json/plain') }, data: text(JSON.stringify({ holder: 'Zoë Ångström 山田', note: '€ ✓' })) } },
    { name: 'null', payload: { metadata: { encoding: text('binary/null') }, data: new Uint8Array() } },
    { name: 'large', payload: { metadata: { encoding: text('json/plain') }, data: text(JSON.stringify(large)) } },
    { name: 'metadata', payload: { metadata: { encoding: text('json/plain'), messageType: text('connection.Input') }, data: text('{"loginId":"L-1"}') } },
  ];
}

const toWire = (payload: Payload): WirePayload => ({
  metadata: Object.fromEntries(Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, Buffer.from(value).toString('base64')])),
  data: Buffer.from(payload.data ?? new Uint8Array()).toString('base64'),
});
const fromWire = (wire: WirePayload): Payload => ({
  metadata: Object.fromEntries(Object.entries(wire.metadata).map(([key, value]) => [key, Buffer.from(value, 'base64')])),
  data: Buffer.from(wire.data, 'base64'),
});
/** Metadata in key order, so both sides compare what they mean. */
const canonical = (wire: WirePayload): string =>
  JSON.stringify({ metadata: Object.fromEntries(Object.entries(wire.metadata).sort(([a], [b]) => a.localeCompare(b))), data: wire.data });

/** Encrypts the samples with `codec` into `file`. */
export async function writeVectors(codec: EncryptionCodec, file: string): Promise<number> {
  const samples = samplePayloads();
  const encoded = await codec.encode(samples.map((sample) => sample.payload));
  const vectors: VectorFile = {
    writer: 'typescript',
    keyId: codec.keyId,
    payloads: samples.map((sample, i) => ({ name: sample.name, plain: toWire(sample.payload), encoded: toWire(encoded[i] as Payload) })),
  };
  writeFileSync(file, `${JSON.stringify(vectors, null, 2)}\n`);
  return vectors.payloads.length;
}

/** Decrypts every payload of `file` with `codec`: the names of those read, in order; VectorMismatchError at the first that differs from its plain payload. */
export async function readVectors(codec: EncryptionCodec, file: string): Promise<{ writer: string; keyId: string; names: string[] }> {
  const vectors = JSON.parse(readFileSync(file, 'utf8')) as VectorFile;
  const decoded = await codec.decode(vectors.payloads.map((vector) => fromWire(vector.encoded)));
  for (const [i, vector] of vectors.payloads.entries()) {
    if (canonical(toWire(decoded[i] as Payload)) !== canonical(vector.plain)) throw new VectorMismatchError(file, vector.name, vectors.writer);
  }
  return { writer: vectors.writer, keyId: vectors.keyId, names: vectors.payloads.map((vector) => vector.name) };
}

interface StoredVectorFile {
  readonly writer: string;
  readonly keyId: string;
  readonly workflowId: string;
  readonly payloads: readonly {
    readonly name: string;
    readonly plain: WirePayload;
    readonly reference: WirePayload;
    readonly stored: { readonly key: string; readonly bytes: string };
  }[];
}

/** The workflow the stored samples are filed under: an id that needs escaping in keys. */
export const STORED_VECTORS_WORKFLOW_ID = 'vectors/stored ü';
const STORED_SAMPLES = new Set(['json', 'large', 'metadata']);

/** Encrypts three samples with `codec` and keeps them with `driver` (as External Storage does past its threshold) into `file`. */
export async function writeStoredVectors(codec: EncryptionCodec, driver: PayloadStoreDriver, file: string): Promise<number> {
  const samples = samplePayloads().filter((sample) => STORED_SAMPLES.has(sample.name));
  const encoded = await codec.encode(samples.map((sample) => sample.payload));
  const target = { kind: 'workflow' as const, namespace: 'default', id: STORED_VECTORS_WORKFLOW_ID };
  const claims = await driver.store({ target }, encoded);
  const vectors: StoredVectorFile = {
    writer: 'typescript',
    keyId: codec.keyId,
    workflowId: STORED_VECTORS_WORKFLOW_ID,
    payloads: samples.map((sample, i) => {
      const payload = encoded[i] as Payload;
      const claim = claims[i] as StorageDriverClaim;
      const reference = encodeReferencePayload({ driverName: driver.name, claim, sizeBytes: serializePayload(payload).bytes.length });
      const key = claim.claimData.key ?? '';
      return {
        name: sample.name,
        plain: toWire(sample.payload),
        reference: toWire(reference),
        stored: { key, bytes: Buffer.from(serializePayload(payload).bytes).toString('base64') },
      };
    }),
  };
  writeFileSync(file, `${JSON.stringify(vectors, null, 2)}\n`);
  return vectors.payloads.length;
}

/** Fetches every reference of `file` through `driver`, decrypts with `codec`, and compares with its plain payload. */
export async function readStoredVectors(
  codec: EncryptionCodec,
  driver: PayloadStoreDriver,
  file: string,
): Promise<{ writer: string; keyId: string; names: string[]; claimFields: string[] }> {
  const vectors = JSON.parse(readFileSync(file, 'utf8')) as StoredVectorFile;
  const references = vectors.payloads.map((vector) => decodeReferencePayload(fromWire(vector.reference)));
  for (const [i, reference] of references.entries()) {
    if (reference.driverName !== driver.name)
      throw new VectorMismatchError(file, vectors.payloads[i]?.name ?? '', vectors.writer, `names driver ${reference.driverName}, not ${driver.name}`);
  }
  const stored = await driver.retrieve(
    {},
    references.map((reference) => new StorageDriverClaim(reference.claimData)),
  );
  const decoded = await codec.decode(stored);
  for (const [i, vector] of vectors.payloads.entries()) {
    if (canonical(toWire(decoded[i] as Payload)) !== canonical(vector.plain)) throw new VectorMismatchError(file, vector.name, vectors.writer);
  }
  const claimFields = [...new Set(references.flatMap((reference) => Object.keys(reference.claimData)))].sort();
  return { writer: vectors.writer, keyId: vectors.keyId, names: vectors.payloads.map((vector) => vector.name), claimFields };
}

export class VectorMismatchError extends Error {
  override readonly name = 'VectorMismatchError';
  constructor(
    readonly file: string,
    readonly payload: string,
    readonly writer: string,
    problem = 'decrypts to something else than its plain payload',
  ) {
    super(`${payload} of ${file} (written by ${writer}) ${problem}`);
  }
}

async function main([command, file]: string[]): Promise<number> {
  if (!['write', 'read', 'write-stored', 'read-stored'].includes(command ?? '') || !file) {
    process.stderr.write('usage: tsx scripts/payload-vectors.ts write|read|write-stored|read-stored <file>\n');
    return 2;
  }
  if (command === 'write-stored' || command === 'read-stored') return storedMain(command, file);
  const codec = encryptionCodecFor(settingsOrExit('payload-vectors', () => loadPayloadCodecConfig()));
  if (!codec) {
    process.stderr.write('payload-vectors: PAYLOAD_ENCRYPTION is off: there is nothing to encrypt with\n');
    return 2;
  }
  try {
    if (command === 'write') {
      process.stdout.write(`wrote ${await writeVectors(codec, file)} payloads encrypted under key id ${codec.keyId} to ${file}\n`);
      return 0;
    }
    const { writer, keyId, names } = await readVectors(codec, file);
    for (const name of names) process.stdout.write(`read ${name} (written by ${writer}, key id ${keyId})\n`);
    return 0;
  } catch (error) {
    process.stderr.write(`payload-vectors: ${(error as Error).message}\n`);
    return 1;
  }
}

async function storedMain(command: 'write-stored' | 'read-stored', file: string): Promise<number> {
  const config = settingsOrExit('payload-vectors', () => loadPayloadConfig());
  const codec = encryptionCodecFor(config);
  const driver = payloadStoreDriverFor(config.payloadStore);
  if (!codec || !driver) {
    process.stderr.write(`payload-vectors: ${codec ? 'PAYLOAD_STORE is off' : 'PAYLOAD_ENCRYPTION is off'}: stored vectors need both a codec and a store\n`);
    return 2;
  }
  try {
    if (command === 'write-stored') {
      process.stdout.write(`wrote ${await writeStoredVectors(codec, driver, file)} stored payloads encrypted under key id ${codec.keyId} to ${file}\n`);
      return 0;
    }
    const { writer, keyId, names, claimFields } = await readStoredVectors(codec, driver, file);
    for (const name of names) process.stdout.write(`read stored ${name} (written by ${writer}, key id ${keyId}, claim ${claimFields.join(' ')})\n`);
    return 0;
  } catch (error) {
    process.stderr.write(`payload-vectors: ${(error as Error).message}\n`);
    return 1;
  } finally {
    driver.close();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) process.exitCode = await main(process.argv.slice(2));

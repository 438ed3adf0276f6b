/**
 * Cross-language payload vectors, TypeScript's side (Python's: python/tests/payload_vectors.py, the
 * same commands and file format): payloads this codec encrypts, in a JSON file the other side decodes.
 *   tsx scripts/payload-vectors.ts write <file>   encrypt the sample payloads with the codec of the environment
 *   tsx scripts/payload-vectors.ts read <file>    decrypt a file's payloads and check each equals its plain one
 * The codec is configured by the variables every process reads (PAYLOAD_ENCRYPTION_KEY, PAYLOAD_KEY_PROVIDER, ...).
 * File: { writer, keyId, payloads: [{ name, plain, encoded }] }, each payload { metadata: { key: base64 }, data: base64 }.
 * `read` prints one line per payload and exits 1 naming the first that does not match or cannot be decrypted (2 on a bad call).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Payload } from '@temporalio/common';
import type { EncryptionCodec } from '../src/codec/encryption-codec.js';
import { encryptionCodecFor } from '../src/codec/data-converter.js';
import { loadPayloadCodecConfig } from '../src/settings/payload-codec.js';
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
const canonical = (wire: WirePayload): string => JSON.stringify({ metadata: Object.fromEntries(Object.entries(wire.metadata).sort(([a], [b]) => a.localeCompare(b))), data: wire.data });

/** Encrypts the samples with `codec` into `file`. */
export async function writeVectors(codec: EncryptionCodec, file: string): Promise<number> {
  const samples = samplePayloads();
  const encoded = await codec.encode(samples.map((sample) => sample.payload));
  const vectors: VectorFile = { writer: 'typescript', keyId: codec.keyId, payloads: samples.map((sample, i) => ({ name: sample.name, plain: toWire(sample.payload), encoded: toWire(encoded[i] as Payload) })) };
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

export class VectorMismatchError extends Error {
  override readonly name = 'VectorMismatchError';
  constructor(
    readonly file: string,
    readonly payload: string,
    readonly writer: string,
  ) {
    super(`${payload} of ${file} (written by ${writer}) decrypts to something else than its plain payload`);
  }
}

async function main([command, file]: string[]): Promise<number> {
  if ((command !== 'write' && command !== 'read') || !file) {
    process.stderr.write('usage: tsx scripts/payload-vectors.ts write|read <file>\n');
    return 2;
  }
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

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) process.exitCode = await main(process.argv.slice(2));

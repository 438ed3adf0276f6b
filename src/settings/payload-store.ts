/**
 * Shared section `payloadStore`: where large payloads go outside history (src/payload-store/), and
 * payloadSections, the encryption and store sections every process that reads or writes payloads has.
 */
import { z } from 'zod';
import { DEFAULT_PAYLOAD_SIZE_THRESHOLD_BYTES, HISTORY_PAYLOAD_LIMIT_BYTES, type PayloadStoreSettings } from '../payload-store/settings.js';
import { Bool, doc, group } from './document.js';
import { type EncryptionVars, checkEncryption, encryptionSection, isLoopback } from './encryption-keys.js';

export const PayloadStoreVars = group(
  z.object({
    PAYLOAD_STORE: doc(
      z.enum(['auto', 'local', 's3', 'off']).default('auto'),
      '"auto": a local directory with Temporal on this machine (the dev stack), none with Temporal elsewhere (a directory is one machine\'s: several workers need "s3"); "local", "s3" or "off" to choose. Without a store a product larger than history can hold ends its connection as ResultTooLarge.',
    ),
    PAYLOAD_STORE_DIRECTORY: doc(
      z.string().trim().min(1).default('.temporal/payloads'),
      "The local store: it must live as long as the histories that point into it (beside the dev server's database).",
    ),
    PAYLOAD_STORE_S3_BUCKET: doc(z.string().trim().min(1).optional(), 'The S3 bucket; required with PAYLOAD_STORE=s3.'),
    PAYLOAD_STORE_S3_PREFIX: doc(z.string().trim().min(1).optional(), 'A key prefix inside the bucket.'),
    PAYLOAD_STORE_S3_ENDPOINT: doc(
      z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).optional(),
      "An S3-compatible server (e.g. MinIO); AWS when unset. Credentials come from the AWS SDK's default chain (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, a profile, or an instance or task role).",
    ),
    PAYLOAD_STORE_S3_REGION: doc(z.string().trim().min(1).optional(), "The bucket's region.", { defaultText: "the AWS SDK's" }),
    PAYLOAD_STORE_S3_FORCE_PATH_STYLE: doc(Bool.default(false), 'Path-style URLs (bucket in the path), as most S3-compatible servers want.'),
    PAYLOAD_STORE_THRESHOLD_BYTES: doc(
      z.coerce.number().int().min(0).max(HISTORY_PAYLOAD_LIMIT_BYTES).default(DEFAULT_PAYLOAD_SIZE_THRESHOLD_BYTES),
      `Payloads of at least this many (encrypted) bytes leave history for the store; 0 to ${HISTORY_PAYLOAD_LIMIT_BYTES} (256 KiB).`,
    ),
  }),
  'Payload store: large payloads outside Temporal history',
  'Every process that writes or reads workflow payloads (worker, pipeline client, CLI, console, the Python package of docs/python-pipeline.md) needs the same settings: a process without them fails on a stored payload.',
);
export type PayloadStoreVars = z.output<typeof PayloadStoreVars> & { readonly TEMPORAL_ADDRESS: string };

function checkPayloadStore(env: PayloadStoreVars, ctx: z.RefinementCtx): void {
  if (env.PAYLOAD_STORE === 's3' && !env.PAYLOAD_STORE_S3_BUCKET) {
    ctx.addIssue({ code: 'custom', path: ['PAYLOAD_STORE_S3_BUCKET'], message: 'is required with PAYLOAD_STORE=s3' });
  }
}

/** The `payloadStore` section, in the store's own terms. */
function payloadStoreSection(env: PayloadStoreVars): PayloadStoreSettings {
  const kind = env.PAYLOAD_STORE === 'auto' ? (isLoopback(env.TEMPORAL_ADDRESS) ? 'local' : 'off') : env.PAYLOAD_STORE;
  const thresholdBytes = env.PAYLOAD_STORE_THRESHOLD_BYTES;
  if (kind === 'local') return Object.freeze({ kind, directory: env.PAYLOAD_STORE_DIRECTORY, thresholdBytes });
  if (kind === 'off') return Object.freeze({ kind });
  return Object.freeze({
    kind,
    bucket: env.PAYLOAD_STORE_S3_BUCKET ?? '',
    prefix: env.PAYLOAD_STORE_S3_PREFIX,
    endpoint: env.PAYLOAD_STORE_S3_ENDPOINT,
    region: env.PAYLOAD_STORE_S3_REGION,
    forcePathStyle: env.PAYLOAD_STORE_S3_FORCE_PATH_STYLE,
    thresholdBytes,
  });
}

/** The two payload sections every process that reads or writes workflow payloads has. */
export function payloadSections(env: EncryptionVars & PayloadStoreVars, ctx: z.RefinementCtx) {
  return { ...encryptionSection(env, ctx), payloadStore: payloadStoreSection(env) };
}

export function checkPayloads(env: EncryptionVars & PayloadStoreVars, ctx: z.RefinementCtx): void {
  checkEncryption(env, ctx);
  checkPayloadStore(env, ctx);
}

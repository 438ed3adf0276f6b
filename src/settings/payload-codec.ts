/**
 * The payload codec's settings alone (the `encryption` section of every process, read from the same
 * variables): for tools that only encrypt or decrypt payloads, such as the cross-language payload
 * vectors (scripts/payload-vectors.ts), which need no tenant or task queue; `loadPayloadConfig` adds
 * the payload store's section for the vectors of stored payloads.
 */
import { z } from 'zod';
import type { EncryptionSettings } from '../codec/key-provider.js';
import { KeyProviderVars } from './kms.js';
import { parseEnv } from './load.js';
import type { PayloadStoreSettings } from '../payload-store/settings.js';
import { EncryptionVars, checkEncryption, encryptionSection } from './encryption-keys.js';
import { PayloadStoreVars, checkPayloads, payloadSections } from './payload-store.js';
import { TemporalEnvConfigVars } from './temporal-env-config.js';
import { TemporalVars, withTemporalEnvConfig } from './temporal.js';

const PayloadCodecEnv = z
  .looseObject({ TEMPORAL_ADDRESS: TemporalVars.shape.TEMPORAL_ADDRESS, ...TemporalEnvConfigVars.shape, ...EncryptionVars.shape, ...KeyProviderVars.shape })
  .transform(withTemporalEnvConfig)
  .superRefine(checkEncryption)
  .transform((env, ctx) => encryptionSection(env, ctx));

/** `{ encryption }` as a client would have it (no `encryption` when PAYLOAD_ENCRYPTION=off). */
export function loadPayloadCodecConfig(env?: NodeJS.ProcessEnv): { readonly encryption?: EncryptionSettings } {
  return parseEnv(PayloadCodecEnv, env);
}

const PayloadStoreEnv = z
  .looseObject({
    TEMPORAL_ADDRESS: TemporalVars.shape.TEMPORAL_ADDRESS,
    ...TemporalEnvConfigVars.shape,
    ...EncryptionVars.shape,
    ...KeyProviderVars.shape,
    ...PayloadStoreVars.shape,
  })
  .transform(withTemporalEnvConfig)
  .superRefine(checkPayloads)
  .transform((env, ctx) => payloadSections(env, ctx));

/** `{ encryption, payloadStore }` as a client would have them: for tools that also read or write stored payloads. */
export function loadPayloadConfig(env?: NodeJS.ProcessEnv): { readonly encryption?: EncryptionSettings; readonly payloadStore: PayloadStoreSettings } {
  return parseEnv(PayloadStoreEnv, env);
}

/**
 * The payload codec's settings alone (the `encryption` section of every process, read from the same
 * variables): for tools that only encrypt or decrypt payloads, such as the cross-language payload
 * vectors (scripts/payload-vectors.ts), which need no tenant, task queue or payload store.
 */
import { z } from 'zod';
import type { EncryptionSettings } from '../codec/key-provider.js';
import { KeyProviderVars } from './key-provider.js';
import { parseEnv } from './load.js';
import { EncryptionVars, checkEncryption, encryptionSection } from './payload-keys.js';
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

/**
 * The operator console's settings (`npm run console`): loadConsoleConfig
 *   { port, host, token, codecCorsOrigins, encryption?, payloadStore }; it reaches Temporal with the client's.
 */
import { z } from 'zod';
import { NonEmpty, Port, doc, group } from './document.js';
import { parseEnv } from './load.js';
import { KeyProviderVars } from './kms.js';
import { EncryptionVars } from './encryption-keys.js';
import { PayloadStoreVars, checkPayloads, payloadSections } from './payload-store.js';
import { TemporalEnvConfigVars } from './temporal-env-config.js';
import { TemporalVars, withTemporalEnvConfig } from './temporal.js';

export const ConsolePort = doc(Port.default(8080), 'The operator console listens on this port.');

const ORIGIN_RULE = 'must be a comma-separated list of origins such as http://localhost:8233 (scheme, host and port only)';
/** Origins allowed to call the console's codec endpoint from a browser (the Temporal Web UI). */
const CorsOrigins = z.string().transform((text, ctx) => {
  const origins: string[] = [];
  for (const raw of text.split(',')) {
    const entry = raw.trim().replace(/\/$/, '');
    if (entry === '') continue;
    let origin: string | undefined;
    try {
      origin = new URL(entry).origin;
    } catch {
      origin = undefined;
    }
    if (origin === undefined || origin === 'null' || origin !== entry) {
      ctx.addIssue({ code: 'custom', message: `${JSON.stringify(entry)}: ${ORIGIN_RULE}` });
      continue;
    }
    origins.push(origin);
  }
  return origins;
});

const CONSOLE_TOKEN_RULE = 'at least 16 characters, e.g. `openssl rand -hex 24`';
export const ConsoleVars = group(
  z.object({
    CONSOLE_HOST: doc(NonEmpty.default('127.0.0.1'), 'The address the console listens on: 127.0.0.1 unless it sits behind a proxy (0.0.0.0 in a container).'),
    CONSOLE_PORT: ConsolePort,
    CONSOLE_TOKEN: doc(
      z.string({ message: 'is required: set CONSOLE_TOKEN to a long random secret (e.g. `openssl rand -hex 24`)' }).min(16, { message: 'must be at least 16 characters' }),
      `The operators' bearer token, required: ${CONSOLE_TOKEN_RULE}.`,
      { secret: true },
    ),
    CONSOLE_CODEC_TOKEN: doc(
      z.string().min(16, { message: 'must be at least 16 characters' }).optional(),
      `The codec endpoint's own credential: it decodes (/codec/decode, as \`Authorization: Bearer\`, e.g. the temporal CLI's TEMPORAL_CODEC_AUTH) and opens nothing else, so a tool that reads payloads needs no console token, and it is revoked by changing it alone. Unset: only the console's token or cookie decodes. ${CONSOLE_TOKEN_RULE}, other than CONSOLE_TOKEN and CONSOLE_CODEC_ENCODE_TOKEN.`,
      { secret: true, defaultText: 'unset' },
    ),
    CONSOLE_CODEC_ENCODE_TOKEN: doc(
      z.string().min(16, { message: 'must be at least 16 characters' }).optional(),
      `The one credential that may encode through the codec endpoint (/codec/encode, as \`Authorization: Bearer\`): an encoded payload is one the worker trusts, so neither the console token, its cookie nor CONSOLE_CODEC_TOKEN may make one. Unset: the endpoint decodes only. ${CONSOLE_TOKEN_RULE}, other than CONSOLE_TOKEN.`,
      { secret: true, defaultText: 'unset: decode only' },
    ),
    CONSOLE_CODEC_CORS_ORIGINS: doc(
      CorsOrigins.default(['http://localhost:8233', 'http://127.0.0.1:8233']),
      "Browser origins (the Temporal Web UI) allowed to call the console's codec endpoint (/codec/encode, /codec/decode) with credentials: comma-separated origins.",
    ),
  }),
  'Operator console',
  'The operator console (`npm run console`); it reaches Temporal with the client settings, and decodes payloads with the encryption and payload store settings.',
);

/** The console reaches Temporal with the client's config; its own is the listener and the payload sections. */
export const ConsoleVariables = z.looseObject({
  ...ConsoleVars.shape,
  /** Where the histories the console decodes live (ours, else the Temporal profile's): decides whether a generated local key may be used. */
  TEMPORAL_ADDRESS: TemporalVars.shape.TEMPORAL_ADDRESS,
  ...TemporalEnvConfigVars.shape,
  ...EncryptionVars.shape,
  ...KeyProviderVars.shape,
  ...PayloadStoreVars.shape,
});

const ConsoleEnv = ConsoleVariables.transform(withTemporalEnvConfig)
  .superRefine(checkPayloads)
  .superRefine((env, ctx) => {
    if (env.CONSOLE_CODEC_ENCODE_TOKEN !== undefined && env.CONSOLE_CODEC_ENCODE_TOKEN === env.CONSOLE_TOKEN) {
      ctx.addIssue({ code: 'custom', path: ['CONSOLE_CODEC_ENCODE_TOKEN'], message: 'must differ from CONSOLE_TOKEN: whoever may operate the console must not thereby make payloads the worker trusts' });
    }
    if (env.CONSOLE_CODEC_TOKEN !== undefined && env.CONSOLE_CODEC_TOKEN === env.CONSOLE_TOKEN) {
      ctx.addIssue({ code: 'custom', path: ['CONSOLE_CODEC_TOKEN'], message: 'must differ from CONSOLE_TOKEN: the codec token decodes only, and is revoked without revoking the console' });
    }
    if (env.CONSOLE_CODEC_TOKEN !== undefined && env.CONSOLE_CODEC_TOKEN === env.CONSOLE_CODEC_ENCODE_TOKEN) {
      ctx.addIssue({ code: 'custom', path: ['CONSOLE_CODEC_TOKEN'], message: 'must differ from CONSOLE_CODEC_ENCODE_TOKEN: a token that decodes must not also make payloads the worker trusts' });
    }
  })
  .transform((env, ctx) =>
    Object.freeze({
      port: env.CONSOLE_PORT,
      host: env.CONSOLE_HOST,
      token: env.CONSOLE_TOKEN,
      /** A bearer credential that opens /codec/decode and nothing else; undefined: none. */
      codecToken: env.CONSOLE_CODEC_TOKEN,
      /** The only credential /codec/encode accepts; undefined: the codec decodes only. */
      codecEncodeToken: env.CONSOLE_CODEC_ENCODE_TOKEN,
      /** Origins allowed to call the codec endpoint cross-origin, with credentials. */
      codecCorsOrigins: Object.freeze(env.CONSOLE_CODEC_CORS_ORIGINS),
      ...payloadSections(env, ctx),
    }),
  );

export type ConsoleConfig = z.output<typeof ConsoleEnv>;

export function loadConsoleConfig(env?: NodeJS.ProcessEnv): ConsoleConfig {
  return parseEnv(ConsoleEnv, env);
}

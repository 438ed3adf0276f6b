/**
 * The operator console's settings (`npm run console`): loadConsoleConfig
 *   { port, host, token, codecCorsOrigins, encryption?, payloadStore }; it reaches Temporal with the client's.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { OidcSettings } from '../identity/oidc-sign-in.js';
import { parseRoleMap, RoleMapError, type RoleGrant } from '../identity/roles.js';
import { SESSION_KEY_BYTES } from '../identity/sealed-cookie.js';
import { AuditVars, auditStoreLocation, clearTextBeyondLoopback } from './audit.js';
import { CountAtLeast, NonEmpty, Port, doc, group } from './document.js';
import { isLoopbackHost } from './kms.js';
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

/** OIDC client ids, comma-separated; `none`: no client's. */
const BearerClients = z.string().transform((text, ctx) => {
  if (text.trim() === 'none') return [];
  const ids = text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const id of ids)
    if (!/^[\x21-\x7e]{1,255}$/.test(id))
      ctx.addIssue({ code: 'custom', message: `${JSON.stringify(id)}: must be a comma-separated list of client ids (printable, no spaces)` });
  return ids;
});

const CONSOLE_TOKEN_RULE = 'at least 16 characters, e.g. `openssl rand -hex 24`';
export const ConsoleVars = group(
  z.object({
    CONSOLE_HOST: doc(NonEmpty.default('127.0.0.1'), 'The address the console listens on: 127.0.0.1 unless it sits behind a proxy (0.0.0.0 in a container).'),
    CONSOLE_PORT: ConsolePort,
    CONSOLE_MODE: doc(
      z.enum(['development', 'production']).default('development'),
      '"production": operators sign in (CONSOLE_OIDC_*), the shared CONSOLE_TOKEN is refused, and the session secret and an https public address are required. "development": the dev stack\'s shared token is accepted (every permission on every tenant).',
    ),
    CONSOLE_TOKEN: doc(
      z.string().min(16, { message: 'must be at least 16 characters' }).optional(),
      `The dev stack's shared bearer token (${CONSOLE_TOKEN_RULE}): every permission on every tenant. Required unless operators sign in (CONSOLE_OIDC_ISSUER); refused with CONSOLE_MODE=production.`,
      { secret: true, defaultText: 'unset' },
    ),
    CONSOLE_OIDC_ISSUER: doc(
      z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).optional(),
      'Operators sign in through this OpenID Connect provider (its issuer identifier; discovery is under it): https, or http to this machine only. With it, CONSOLE_OIDC_CLIENT_ID and CONSOLE_OIDC_CLIENT_SECRET are required, and CONSOLE_ROLE_MAP says what each group may do.',
      { defaultText: 'unset: the shared token alone' },
    ),
    CONSOLE_OIDC_CLIENT_ID: doc(
      NonEmpty.optional(),
      "The console's client id at the provider (a confidential client, authorization code with PKCE, redirect URI <CONSOLE_PUBLIC_URL>/auth/callback).",
    ),
    CONSOLE_OIDC_CLIENT_SECRET: doc(NonEmpty.optional(), "The console's client secret at the provider.", { secret: true }),
    CONSOLE_PUBLIC_URL: doc(
      z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).optional(),
      'The address operators open the console at (behind its proxy), e.g. https://console.lender.example; the provider sends them back to <it>/auth/callback.',
      { defaultText: 'http://<CONSOLE_HOST>:<CONSOLE_PORT>' },
    ),
    CONSOLE_OIDC_GROUPS_CLAIM: doc(NonEmpty.default('groups'), "The claim (ID token, else userinfo) that lists the identity's groups."),
    CONSOLE_ROLE_MAP: doc(
      z.string().default(''),
      'Which group holds which role on which tenant: comma-separated <group>=<role>@<customerId or *>, roles viewer, operator, analyst and admin, e.g. `lender-a-ops=operator@lender-a,platform=admin@*`. A signed-in identity none of whose groups is listed may do nothing.',
      { defaultText: 'empty: nobody may do anything' },
    ),
    CONSOLE_SESSION_SECRET: doc(
      z.string().trim().optional(),
      `Base64 of ${SESSION_KEY_BYTES} bytes (\`openssl rand -base64 ${SESSION_KEY_BYTES}\`): seals the session cookies; every replica of the console needs the same one. Required with CONSOLE_MODE=production.`,
      { secret: true, defaultText: 'development: a new one at each start (sessions end with the process)' },
    ),
    CONSOLE_OIDC_RECHECK_S: doc(
      CountAtLeast(1).default(60),
      'A signed-in identity is asked about again (userinfo) after this long: a provider that no longer accepts it ends the session.',
    ),
    CONSOLE_SESSION_MAX_S: doc(CountAtLeast(60).default(28_800), 'A session lasts at most this long (and never past its access token).'),
    CONSOLE_OIDC_TIMEOUT_MS: doc(
      CountAtLeast(100).default(5_000),
      'One call to the provider may take this long before sign-in fails as the provider unavailable.',
    ),
    CONSOLE_BEARER_CLIENTS: doc(
      BearerClients.default(['aggregation-cli']),
      "The provider's client ids whose access tokens the console's API takes as `Authorization: Bearer` (a person's token, from the CLI's `login` or a pipeline's own client): comma-separated; `none`: no bearer tokens. The provider vouches for each token (introspection, with the console's client credentials) and its identity's groups give its roles, as a session's do. A token issued to any other client is refused, so one a third-party application obtained cannot be replayed here.",
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
  ...AuditVars.shape,
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
      ctx.addIssue({
        code: 'custom',
        path: ['CONSOLE_CODEC_ENCODE_TOKEN'],
        message: 'must differ from CONSOLE_TOKEN: whoever may operate the console must not thereby make payloads the worker trusts',
      });
    }
    if (env.CONSOLE_CODEC_TOKEN !== undefined && env.CONSOLE_CODEC_TOKEN === env.CONSOLE_TOKEN) {
      ctx.addIssue({
        code: 'custom',
        path: ['CONSOLE_CODEC_TOKEN'],
        message: 'must differ from CONSOLE_TOKEN: the codec token decodes only, and is revoked without revoking the console',
      });
    }
    if (env.CONSOLE_CODEC_TOKEN !== undefined && env.CONSOLE_CODEC_TOKEN === env.CONSOLE_CODEC_ENCODE_TOKEN) {
      ctx.addIssue({
        code: 'custom',
        path: ['CONSOLE_CODEC_TOKEN'],
        message: 'must differ from CONSOLE_CODEC_ENCODE_TOKEN: a token that decodes must not also make payloads the worker trusts',
      });
    }
  })
  .superRefine(checkSignIn)
  .transform((env, ctx) =>
    Object.freeze({
      port: env.CONSOLE_PORT,
      host: env.CONSOLE_HOST,
      mode: env.CONSOLE_MODE,
      /** The shared token (development); undefined where operators sign in only. */
      token: env.CONSOLE_TOKEN,
      /** Operators sign in through OpenID Connect; undefined: the shared token alone. */
      signIn: signInSection(env, ctx),
      /** A bearer credential that opens /codec/decode and nothing else; undefined: none. */
      codecToken: env.CONSOLE_CODEC_TOKEN,
      /** The only credential /codec/encode accepts; undefined: the codec decodes only. */
      codecEncodeToken: env.CONSOLE_CODEC_ENCODE_TOKEN,
      /** Origins allowed to call the codec endpoint cross-origin, with credentials. */
      codecCorsOrigins: Object.freeze(env.CONSOLE_CODEC_CORS_ORIGINS),
      /** Where the audit trail is kept: `file:<path>` or a postgres:// address. */
      auditStore: auditStoreLocation(env),
      ...payloadSections(env, ctx),
    }),
  );

type ConsoleEnvValues = z.output<typeof ConsoleVariables>;

/** How the console signs operators in: its provider, its role map and the key of its session cookies. */
export interface SignInSection {
  readonly oidc: OidcSettings;
  /** The client ids whose access tokens the API takes as bearer credentials (CONSOLE_BEARER_CLIENTS). */
  readonly bearerClients: readonly string[];
  readonly sessionKey: Uint8Array;
}

const OIDC_TRIO = ['CONSOLE_OIDC_ISSUER', 'CONSOLE_OIDC_CLIENT_ID', 'CONSOLE_OIDC_CLIENT_SECRET'] as const;

function checkSignIn(env: ConsoleEnvValues, ctx: z.RefinementCtx): void {
  const set = OIDC_TRIO.filter((name) => env[name] !== undefined);
  if (set.length > 0 && set.length < OIDC_TRIO.length) {
    for (const name of OIDC_TRIO.filter((each) => env[each] === undefined))
      ctx.addIssue({
        code: 'custom',
        path: [name],
        message: `is required with ${set.join(' and ')}: signing in needs the provider, the client id and its secret`,
      });
  }
  const oidc = set.length === OIDC_TRIO.length;
  if (!oidc && env.CONSOLE_TOKEN === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['CONSOLE_TOKEN'],
      message:
        'is required unless operators sign in (CONSOLE_OIDC_ISSUER, _CLIENT_ID, _CLIENT_SECRET): set it to a long random secret (e.g. `openssl rand -hex 24`)',
    });
  }
  if (env.CONSOLE_OIDC_ISSUER !== undefined) {
    const issuer = new URL(env.CONSOLE_OIDC_ISSUER);
    if (issuer.protocol === 'http:' && !isLoopbackHost(issuer.hostname)) {
      ctx.addIssue({
        code: 'custom',
        path: ['CONSOLE_OIDC_ISSUER'],
        message: `is http:// to ${issuer.hostname}, not on this machine: the tokens and the client secret would cross the network in clear; use https://`,
      });
    }
  }
  try {
    parseRoleMap(env.CONSOLE_ROLE_MAP);
  } catch (error) {
    if (!(error instanceof RoleMapError)) throw error;
    ctx.addIssue({ code: 'custom', path: ['CONSOLE_ROLE_MAP'], message: error.message });
  }
  if (env.CONSOLE_SESSION_SECRET !== undefined && Buffer.from(env.CONSOLE_SESSION_SECRET, 'base64').length !== SESSION_KEY_BYTES) {
    ctx.addIssue({
      code: 'custom',
      path: ['CONSOLE_SESSION_SECRET'],
      message: `must be base64 of exactly ${SESSION_KEY_BYTES} bytes (\`openssl rand -base64 ${SESSION_KEY_BYTES}\`)`,
    });
  }
  if (env.CONSOLE_MODE !== 'production') return;
  if (env.CONSOLE_TOKEN !== undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['CONSOLE_TOKEN'],
      message: 'is refused with CONSOLE_MODE=production: one shared token opens every tenant and names nobody; operators sign in (CONSOLE_OIDC_*) instead',
    });
  }
  if (!oidc)
    ctx.addIssue({
      code: 'custom',
      path: ['CONSOLE_OIDC_ISSUER'],
      message: 'is required with CONSOLE_MODE=production: operators sign in through the provider',
    });
  if (env.AUDIT_STORE === undefined || env.AUDIT_STORE.startsWith('file:')) {
    ctx.addIssue({
      code: 'custom',
      path: ['AUDIT_STORE'],
      message: 'must be a postgres:// address with CONSOLE_MODE=production: a file on one replica is neither shared nor kept when the container goes',
    });
  } else if (clearTextBeyondLoopback(env.AUDIT_STORE)) {
    ctx.addIssue({
      code: 'custom',
      path: ['AUDIT_STORE'],
      message: 'has sslmode=disable to another host, refused with CONSOLE_MODE=production: use sslmode=verify-full',
    });
  }
  if (env.CONSOLE_SESSION_SECRET === undefined)
    ctx.addIssue({
      code: 'custom',
      path: ['CONSOLE_SESSION_SECRET'],
      message: 'is required with CONSOLE_MODE=production: every replica seals sessions with it, and sessions outlive a restart',
    });
  if (env.CONSOLE_PUBLIC_URL === undefined || new URL(env.CONSOLE_PUBLIC_URL).protocol !== 'https:') {
    ctx.addIssue({
      code: 'custom',
      path: ['CONSOLE_PUBLIC_URL'],
      message: 'must be the https:// address operators open with CONSOLE_MODE=production: the session cookie travels over TLS only',
    });
  }
}

function signInSection(env: ConsoleEnvValues, ctx: z.RefinementCtx): SignInSection | undefined {
  if (env.CONSOLE_OIDC_ISSUER === undefined || env.CONSOLE_OIDC_CLIENT_ID === undefined || env.CONSOLE_OIDC_CLIENT_SECRET === undefined) return undefined;
  let roleMap: RoleGrant[];
  try {
    roleMap = parseRoleMap(env.CONSOLE_ROLE_MAP);
  } catch {
    ctx.addIssue({ code: 'custom', path: ['CONSOLE_ROLE_MAP'], message: 'is invalid' });
    return undefined;
  }
  const publicUrl = (env.CONSOLE_PUBLIC_URL ?? `http://${env.CONSOLE_HOST}:${env.CONSOLE_PORT}`).replace(/\/+$/, '');
  return Object.freeze({
    oidc: Object.freeze({
      issuer: new URL(env.CONSOLE_OIDC_ISSUER),
      clientId: env.CONSOLE_OIDC_CLIENT_ID,
      clientSecret: env.CONSOLE_OIDC_CLIENT_SECRET,
      redirectUri: `${publicUrl}/auth/callback`,
      groupsClaim: env.CONSOLE_OIDC_GROUPS_CLAIM,
      roleMap: Object.freeze(roleMap),
      timeoutMs: env.CONSOLE_OIDC_TIMEOUT_MS,
      recheckMs: env.CONSOLE_OIDC_RECHECK_S * 1000,
      sessionMaxMs: env.CONSOLE_SESSION_MAX_S * 1000,
      // checkSignIn refused http:// beyond this machine.
      allowHttp: isLoopbackHost(new URL(env.CONSOLE_OIDC_ISSUER).hostname),
    }),
    bearerClients: Object.freeze(env.CONSOLE_BEARER_CLIENTS),
    // Development without a secret: a new key each start, so its sessions end with the process.
    sessionKey: env.CONSOLE_SESSION_SECRET !== undefined ? Buffer.from(env.CONSOLE_SESSION_SECRET, 'base64') : randomBytes(SESSION_KEY_BYTES),
  });
}

export type ConsoleConfig = z.output<typeof ConsoleEnv>;

export function loadConsoleConfig(env?: NodeJS.ProcessEnv): ConsoleConfig {
  return parseEnv(ConsoleEnv, env);
}

/**
 * Shared section `temporal`: how the worker, the pipeline client, the CLI and the console reach
 * Temporal (address, namespace, task queue, transport: API key, TLS files and names, gRPC metadata),
 * ours where set, else Temporal's environment configuration's, else our defaults.
 * src/temporal/connection.ts turns it into connection options.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { readApiKeyFileSync } from './temporal-api-key-file.js';
import { Bool, CountAtLeast, doc, group, HostName, HostPort } from './document.js';
import { cannotRead, type FromEnvConfig, type TemporalEnvConfig, temporalEnvConfig } from './temporal-env-config.js';

/**
 * Unset, the address, namespace, API key, TLS switch and server name come from Temporal's environment
 * configuration when it has them (temporalEnvConfig below), else from these defaults (exported for
 * the Python package's generated names: scripts/lib/python-names.ts).
 */
/** TEMPORAL_API_KEY_FILE_RECHECK_MS's least value (Python's is generated from it). */
export const API_KEY_FILE_RECHECK_MIN_MS = 100;

export const TEMPORAL_DEFAULTS = { address: 'localhost:7233', namespace: 'default' } as const;

const FROM_PROFILE = "the Temporal profile's, else";

export const TemporalVars = group(
  z.object({
    TEMPORAL_ADDRESS: doc(HostPort.optional(), 'The Temporal frontend, host:port.', { defaultText: `${FROM_PROFILE} ${TEMPORAL_DEFAULTS.address}` }),
    TEMPORAL_NAMESPACE: doc(z.string().trim().min(1).optional(), 'The namespace of the connection workflows.', {
      defaultText: `${FROM_PROFILE} ${TEMPORAL_DEFAULTS.namespace}`,
    }),
    TEMPORAL_TASK_QUEUE: doc(
      z.string().trim().min(1).default('aggregation-connections'),
      'The task queue the worker polls and the clients start connections on.',
    ),
    TEMPORAL_API_KEY: doc(z.string().trim().min(1).optional(), 'Temporal Cloud: an API key implies TLS; it is sent as `authorization: Bearer <key>`.', {
      defaultText: `${FROM_PROFILE} none`,
      secret: true,
    }),
    TEMPORAL_API_KEY_FILE: doc(
      z.string().trim().min(1).optional(),
      "A file whose content is the token, sent as TEMPORAL_API_KEY's is, for a token a sidecar renews (a Kubernetes projected service-account token, a Vault agent template): read at start and again every TEMPORAL_API_KEY_FILE_RECHECK_MS, and a changed token applied to the live connections without a restart. Not with TEMPORAL_API_KEY. A file that is missing, unreadable, empty or not one token at start stops the process, naming it; one that becomes so later keeps the last token (logged once, and when it recovers). The token is never logged.",
    ),
    TEMPORAL_API_KEY_FILE_RECHECK_MS: doc(
      CountAtLeast(API_KEY_FILE_RECHECK_MIN_MS).default(10_000),
      'How often (ms) TEMPORAL_API_KEY_FILE is read again: well within the time a renewed token is written before the old one expires.',
    ),
    TEMPORAL_TLS: doc(Bool.optional(), "TLS with the system's CAs (a publicly signed server certificate). false also turns a profile's TLS off.", {
      defaultText: `${FROM_PROFILE} false`,
    }),
    TEMPORAL_TLS_CA_PATH: doc(
      z.string().trim().min(1).optional(),
      "A self-hosted cluster with a private CA: the server's root CA certificate (PEM). Implies TLS.",
    ),
    TEMPORAL_TLS_SERVER_NAME: doc(
      HostName.optional(),
      "The name the server's certificate is checked against (and sent as SNI) when it is not the host of TEMPORAL_ADDRESS, e.g. an address by IP or through a load balancer. Implies TLS.",
    ),
    TEMPORAL_TLS_CERT_PATH: doc(
      z.string().trim().min(1).optional(),
      'Mutual TLS: the client certificate (PEM), with TEMPORAL_TLS_KEY_PATH (both or neither). Implies TLS. Each file named by a TEMPORAL_TLS_*_PATH must be a readable PEM file, or the process refuses to start, naming it.',
    ),
    TEMPORAL_TLS_KEY_PATH: doc(z.string().trim().min(1).optional(), "Mutual TLS: the client certificate's key (PEM), with TEMPORAL_TLS_CERT_PATH."),
  }),
  'Temporal',
  "How the worker, the pipeline client, the CLI and the console reach Temporal. Each variable wins where set; what they leave unset comes from Temporal's own environment configuration (next section), else the default shown.",
);
export type TemporalVars = z.output<typeof TemporalVars>;

/** The variables naming PEM files, each checked at start-up so a bad path stops the process with its name. */
const TLS_FILE_VARS = ['TEMPORAL_TLS_CA_PATH', 'TEMPORAL_TLS_CERT_PATH', 'TEMPORAL_TLS_KEY_PATH'] as const;

/** Why a TLS file cannot serve, or undefined when it is a readable PEM file. */
function tlsFileProblem(path: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    return cannotRead(path, error);
  }
  return text.includes('-----BEGIN ') ? undefined : `${path} is not a PEM file (no -----BEGIN line)`;
}

export function checkTls(env: TemporalVars, ctx: z.RefinementCtx): void {
  if (Boolean(env.TEMPORAL_TLS_CERT_PATH) !== Boolean(env.TEMPORAL_TLS_KEY_PATH)) {
    ctx.addIssue({ code: 'custom', path: ['TEMPORAL_TLS_CERT_PATH'], message: 'TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH go together' });
  }
  for (const name of TLS_FILE_VARS) {
    const path = env[name];
    const problem = path === undefined ? undefined : tlsFileProblem(path);
    if (problem) ctx.addIssue({ code: 'custom', path: [name], message: problem });
  }
}

/** TEMPORAL_API_KEY or TEMPORAL_API_KEY_FILE, not both; the file holds a token at start, or the process refuses to start, naming it. */
export function checkApiKey(env: TemporalVars, ctx: z.RefinementCtx): void {
  if (env.TEMPORAL_API_KEY_FILE === undefined) return;
  if (env.TEMPORAL_API_KEY !== undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['TEMPORAL_API_KEY_FILE'],
      message: 'TEMPORAL_API_KEY and TEMPORAL_API_KEY_FILE are both set: give the token one way (the file when a sidecar renews it)',
    });
    return;
  }
  const read = readApiKeyFileSync(env.TEMPORAL_API_KEY_FILE);
  if ('problem' in read) ctx.addIssue({ code: 'custom', path: ['TEMPORAL_API_KEY_FILE'], message: read.problem });
}

/** Ours and Temporal's environment configuration, resolved: what temporalSection reads. */
type ResolvedTemporalVars = TemporalVars & { readonly TEMPORAL_ADDRESS: string; readonly TEMPORAL_ENV_CONFIG: TemporalEnvConfig };

/**
 * Settles where Temporal is before anything decides by it (encryption and the payload store ask
 * whether it is on this machine): our TEMPORAL_ADDRESS, else the profile's, else localhost:7233. The
 * schemas that call it are loose objects, so `env` still holds the variables envconfig reads.
 */
export function withTemporalEnvConfig<E extends Record<string, unknown> & { readonly TEMPORAL_ADDRESS?: string | undefined }>(env: E, ctx: z.RefinementCtx) {
  const envConfig = temporalEnvConfig(env, ctx);
  if (envConfig === undefined) return z.NEVER;
  return { ...env, TEMPORAL_ADDRESS: env.TEMPORAL_ADDRESS ?? envConfig.address?.value ?? TEMPORAL_DEFAULTS.address, TEMPORAL_ENV_CONFIG: envConfig };
}

/** The names of the settings, for `fromEnvConfig` and the start-up lines. */
const ENV_CONFIG_SETTINGS: Record<keyof TemporalEnvConfig, string> = {
  address: 'address',
  namespace: 'namespace',
  apiKey: 'API key',
  tls: 'TLS',
  serverName: 'TLS server name',
  serverCa: 'server CA certificate',
  clientCertPair: 'client certificate',
  metadata: 'gRPC metadata',
};

/**
 * The `temporal` section; `transport` is what src/temporal/connection.ts turns into connection
 * options: an API key (with `apiKeyFile`, the token TEMPORAL_API_KEY_FILE held at start, and the file
 * src/temporal/api-key-file.ts re-reads), the server's CA and name, and a client certificate pair (both or neither,
 * checkTls saw to it, as it saw that each file is a readable PEM file), only when set. Any of them
 * but the API key means TLS (an API key implies it in src/temporal/connection.ts, as the SDK does).
 * Each is ours where set, else Temporal's environment configuration's (its CA and certificate
 * already read: `tlsCa`, `tlsCertPair`; and gRPC `metadata`, which we have no variable for), else
 * our default; `fromEnvConfig` names the settings taken from it and where from (absent: none).
 */
export function temporalSection(env: ResolvedTemporalVars) {
  const { TEMPORAL_TLS_CA_PATH: tlsCaPath, TEMPORAL_TLS_CERT_PATH: tlsCertPath, TEMPORAL_TLS_KEY_PATH: tlsKeyPath, TEMPORAL_ENV_CONFIG: envConfig } = env;
  // checkApiKey saw that the file holds a token; src/temporal/connection.ts reads it again as it connects.
  const fromFile = env.TEMPORAL_API_KEY_FILE === undefined ? undefined : readApiKeyFileSync(env.TEMPORAL_API_KEY_FILE);
  const apiKey = fromFile ? ('token' in fromFile ? fromFile.token : undefined) : (env.TEMPORAL_API_KEY ?? envConfig.apiKey?.value);
  const apiKeyFile = env.TEMPORAL_API_KEY_FILE === undefined ? undefined : { path: env.TEMPORAL_API_KEY_FILE, recheckMs: env.TEMPORAL_API_KEY_FILE_RECHECK_MS };
  const tlsServerName = env.TEMPORAL_TLS_SERVER_NAME ?? envConfig.serverName?.value;
  const { serverCa: tlsCa, clientCertPair: tlsCertPair, metadata } = envConfig;
  const fromEnvConfig: Record<string, string> = {};
  for (const [setting, given] of Object.entries(envConfig) as [keyof TemporalEnvConfig, FromEnvConfig<unknown> | { readonly crt: FromEnvConfig<Buffer> }][]) {
    fromEnvConfig[ENV_CONFIG_SETTINGS[setting]] = 'crt' in given ? given.crt.from : given.from;
  }
  return Object.freeze({
    address: env.TEMPORAL_ADDRESS,
    namespace: env.TEMPORAL_NAMESPACE ?? envConfig.namespace?.value ?? TEMPORAL_DEFAULTS.namespace,
    taskQueue: env.TEMPORAL_TASK_QUEUE,
    transport: Object.freeze({
      tls: Boolean(tlsCaPath || tlsServerName || tlsCertPath || tlsCa || tlsCertPair) || (env.TEMPORAL_TLS ?? envConfig.tls?.value ?? false),
      ...(apiKey ? { apiKey } : {}),
      ...(apiKeyFile ? { apiKeyFile: Object.freeze(apiKeyFile) } : {}),
      ...(tlsCaPath ? { tlsCaPath } : {}),
      ...(tlsServerName ? { tlsServerName } : {}),
      ...(tlsCertPath && tlsKeyPath ? { tlsCertPath, tlsKeyPath } : {}),
      ...(tlsCa ? { tlsCa } : {}),
      ...(tlsCertPair ? { tlsCertPair } : {}),
      ...(metadata ? { metadata: metadata.value } : {}),
    }),
    ...(Object.keys(fromEnvConfig).length > 0 ? { fromEnvConfig: Object.freeze(fromEnvConfig) } : {}),
  });
}

export type TemporalSettings = ReturnType<typeof temporalSection>;

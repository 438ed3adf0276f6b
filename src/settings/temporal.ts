/**
 * Shared section `temporal`: how the worker, the pipeline client, the CLI and the console reach
 * Temporal (address, namespace, task queue, transport: API key, TLS files and names, gRPC metadata),
 * ours where set, else Temporal's environment configuration's, else our defaults.
 * src/temporal/connection.ts turns it into connection options.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { Bool, doc, group, HostName, HostPort } from './document.js';
import { cannotRead, type FromEnvConfig, type TemporalEnvConfig, temporalEnvConfig } from './temporal-env-config.js';

/**
 * Unset, the address, namespace, API key, TLS switch and server name come from Temporal's environment
 * configuration when it has them (temporalEnvConfig below), else from these defaults (exported for
 * the Python package's generated names: scripts/lib/python-names.ts).
 */
export const TEMPORAL_DEFAULTS = { address: 'localhost:7233', namespace: 'default' } as const;

const FROM_PROFILE = "the Temporal profile's, else";

export const TemporalVars = group(
  z.object({
    TEMPORAL_ADDRESS: doc(HostPort.optional(), 'The Temporal frontend, host:port.', { defaultText: `${FROM_PROFILE} ${TEMPORAL_DEFAULTS.address}` }),
    TEMPORAL_NAMESPACE: doc(z.string().trim().min(1).optional(), 'The namespace of the connection workflows.', { defaultText: `${FROM_PROFILE} ${TEMPORAL_DEFAULTS.namespace}` }),
    TEMPORAL_TASK_QUEUE: doc(z.string().trim().min(1).default('aggregation-connections'), 'The task queue the worker polls and the clients start connections on.'),
    TEMPORAL_API_KEY: doc(z.string().trim().min(1).optional(), 'Temporal Cloud: an API key implies TLS; it is sent as `authorization: Bearer <key>`.', {
      defaultText: `${FROM_PROFILE} none`,
      secret: true,
    }),
    TEMPORAL_TLS: doc(Bool.optional(), "TLS with the system's CAs (a publicly signed server certificate). false also turns a profile's TLS off.", { defaultText: `${FROM_PROFILE} false` }),
    TEMPORAL_TLS_CA_PATH: doc(z.string().trim().min(1).optional(), "A self-hosted cluster with a private CA: the server's root CA certificate (PEM). Implies TLS."),
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
  'How the worker, the pipeline client, the CLI and the console reach Temporal. Each variable wins where set; what they leave unset comes from Temporal\'s own environment configuration (next section), else the default shown.',
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
 * options: an API key, the server's CA and name, and a client certificate pair (both or neither,
 * checkTls saw to it, as it saw that each file is a readable PEM file), only when set. Any of them
 * but the API key means TLS (an API key implies it in src/temporal/connection.ts, as the SDK does).
 * Each is ours where set, else Temporal's environment configuration's (its CA and certificate
 * already read: `tlsCa`, `tlsCertPair`; and gRPC `metadata`, which we have no variable for), else
 * our default; `fromEnvConfig` names the settings taken from it and where from (absent: none).
 */
export function temporalSection(env: ResolvedTemporalVars) {
  const {
    TEMPORAL_TLS_CA_PATH: tlsCaPath,
    TEMPORAL_TLS_CERT_PATH: tlsCertPath,
    TEMPORAL_TLS_KEY_PATH: tlsKeyPath,
    TEMPORAL_ENV_CONFIG: envConfig,
  } = env;
  const apiKey = env.TEMPORAL_API_KEY ?? envConfig.apiKey?.value;
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

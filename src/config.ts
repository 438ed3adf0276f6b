/**
 * The only reader of process.env: the settings of each process (worker, pipeline client and CLI,
 * operator console, sandbox, the dev stack of `npm start`, the demo, and the scripts, benchmarks and
 * tests around them), zod-parsed once and frozen. A bad or missing value stops start-up with a message
 * naming each offending VARIABLE. Each variable's schema says what it does (doc, group; CONFIG_GROUPS,
 * CONFIG_READERS): `npm run docs:config` writes docs/configuration.md and .env.example from them.
 *
 * Each schema reads the flat variables (so problems name them) and transforms them into a camelCase
 * object nested by concern; the config types are the schemas' outputs. Sections shared by several
 * processes are built by one function each, so they are the same everywhere:
 *   temporal      { address, namespace, taskQueue, transport: { apiKey?, tls, tlsCaPath?, tlsServerName?, tlsCertPath?, tlsKeyPath?,
 *                   tlsCa?, tlsCertPair?, metadata? }, fromEnvConfig? }: our TEMPORAL_* variables where set, else Temporal's
 *                   environment configuration (a temporal.toml profile, Temporal's own TEMPORAL_* variables), else our defaults
 *   encryption?   the codec's keys { keyId, key, decryptionKeys }; absent when PAYLOAD_ENCRYPTION=off
 *   payloadStore  the store's settings (src/payload-store/settings.ts)
 * Per process:
 *   worker    { temporal, aggregator: { baseUrl, customerId, auth?, timeoutMs }, metrics: { host, port (0 = off) }, statusGauge: { intervalMs (0 = off) },
 *               workflows: { bundlePath?, maxCachedWorkflows?, threads?, pollers?, stickyTimeoutMs, maxConcurrentTasks?, reuseV8Context? },
 *               deployment: { name, buildId?, becomeCurrent }, activities: { maxConcurrent? }, logLevel, encryption?, payloadStore }
 *   client    { temporal, customerId, deployment: { name }, encryption?, payloadStore }   (pipeline client and CLI)
 *   console   { port, host, token, codecCorsOrigins, encryption?, payloadStore }   (it reaches Temporal with the client's)
 *   sandbox   { port, host, authSecret?, rateLimitPerSecond? }
 *   dev stack { ports: { temporal, ui, sandbox, console, workerMetrics }, host, sandboxUrl, workerBecomeCurrent, consoleToken?, consoleCodecCorsOrigins? }
 *   demo      { sandboxUrl, scenario }   (it reaches Temporal with the client's)
 * Tooling: loadToolchainConfig (the Temporal binaries' overrides), loadTestConfig, loadTestRunConfig,
 * loadReplayConfig, loadBenchConfig.
 */
import { readFileSync } from 'node:fs';
import { platform } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { loadClientConfig as loadTemporalConfigFile, loadClientConfigProfile, type ClientConfigProfile, type ConfigDataSource } from '@temporalio/envconfig';
import { z } from 'zod';
import type { EncryptionKeys } from './codec/encryption-codec.js';
import { LocalKeyFileError, readOrCreateLocalKey } from './codec/local-key.js';
import { DEFAULT_PRIORITY_KEYS, FAIRNESS_WEIGHT_LIMITS, PRIORITY_KEY_LIMITS, type PriorityPolicy } from './contract/priority.js';
import { BOOK_PAGE_SIZE_LIMITS, DEFAULT_BOOK_PAGE_SIZE, DEFAULT_WINDOW_BOUNDS, WINDOW_LIMITS } from './contract/book-definitions.js';
import { nodeRuntimeProblem } from './settings/node-runtime.js';
import { DEFAULT_PAYLOAD_SIZE_THRESHOLD_BYTES, HISTORY_PAYLOAD_LIMIT_BYTES, type PayloadStoreSettings } from './payload-store/settings.js';

// ---- the reference: each variable's schema says what it does -----------------------------------

/**
 * What the configuration reference says of a variable, carried by its schema (zod's `.meta()`):
 * scripts/generate-config-reference.ts writes docs/configuration.md and .env.example from it, and
 * test/docs/config-reference.test.ts fails when either file no longer matches.
 */
export interface VariableDoc {
  /** What it does, in sentences (markdown inline code allowed). */
  readonly description: string;
  /** The default in words, where the schema's own default does not say it (computed, or not text). */
  readonly defaultText?: string;
  /** The repository file that declares the default instead (`NAME=value` or `${NAME:-value}` lines). */
  readonly defaultFrom?: string;
  /** A secret: .env.example leaves it blank. */
  readonly secret?: boolean;
}

/** `schema` with what the reference says of its variable. */
function doc<S extends z.ZodType>(schema: S, description: string, more: Omit<VariableDoc, 'description'> = {}): S {
  return schema.meta({ description, ...more });
}

/** What the reference says of a group of variables (a section of docs/configuration.md and .env.example). */
export interface GroupDoc {
  readonly title: string;
  readonly description: string;
  /** false: documented in docs/configuration.md only (tests, benchmarks), not in .env.example. */
  readonly envExample?: boolean;
}

function group<S extends z.ZodObject>(schema: S, title: string, description: string, more: Omit<GroupDoc, 'title' | 'description'> = {}): S {
  return schema.meta({ title, description, ...more });
}

const PORT_RULE = { message: 'must be a port number, 0 to 65535' };
const Port = z.coerce.number(PORT_RULE).int(PORT_RULE).min(0, PORT_RULE).max(65_535, PORT_RULE);
const Bool = z.enum(['true', 'false', '1', '0']).transform((value) => value === 'true' || value === '1');

// Ports read both by their process and by the dev stack, which must agree on the defaults.
const SandboxPort = doc(Port.default(4010), 'The sandbox listens on this port; `npm start` starts it there, and `npm run demo` looks for it there unless SANDBOX_URL says otherwise.');
const ConsolePort = doc(Port.default(8080), 'The operator console listens on this port.');
/** Workflow task slots per worker unless set (WORKER_MAX_CONCURRENT_WORKFLOW_TASKS). */
export const DEFAULT_WORKFLOW_TASK_SLOTS = 4;
/** How long a workflow task waits on its worker's sticky queue unless set (WORKER_STICKY_TIMEOUT_MS). */
export const DEFAULT_STICKY_TIMEOUT_MS = 1_000;
const WorkerMetricsPort = doc(Port.default(9464), 'Prometheus metrics at http://WORKER_METRICS_HOST:WORKER_METRICS_PORT/metrics; 0 turns them off.');

// ---- Temporal: how the worker, pipeline client and CLI reach it --------------------------------

/**
 * Unset, the address, namespace, API key, TLS switch and server name come from Temporal's environment
 * configuration when it has them (temporalEnvConfig below), else from these defaults.
 */
const TEMPORAL_DEFAULTS = { address: 'localhost:7233', namespace: 'default' } as const;
const HostPort = z.string().trim().regex(/^[^\s:]+:\d+$/, { message: 'must be host:port' });
const HostName = z.string().trim().regex(/^[A-Za-z0-9.-]+$/, { message: 'must be a host name' });

const FROM_PROFILE = "the Temporal profile's, else";

const TemporalVars = group(
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
type TemporalVars = z.output<typeof TemporalVars>;

/** The variables naming PEM files, each checked at start-up so a bad path stops the process with its name. */
const TLS_FILE_VARS = ['TEMPORAL_TLS_CA_PATH', 'TEMPORAL_TLS_CERT_PATH', 'TEMPORAL_TLS_KEY_PATH'] as const;

/** Why a file could not be read, in words. */
function cannotRead(path: string, error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  return `cannot read ${path} (${code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'a directory' : (code ?? String(error))})`;
}

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

function checkTls(env: TemporalVars, ctx: z.RefinementCtx): void {
  if (Boolean(env.TEMPORAL_TLS_CERT_PATH) !== Boolean(env.TEMPORAL_TLS_KEY_PATH)) {
    ctx.addIssue({ code: 'custom', path: ['TEMPORAL_TLS_CERT_PATH'], message: 'TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH go together' });
  }
  for (const name of TLS_FILE_VARS) {
    const path = env[name];
    const problem = path === undefined ? undefined : tlsFileProblem(path);
    if (problem) ctx.addIssue({ code: 'custom', path: [name], message: problem });
  }
}

// ---- Temporal's environment configuration: temporal.toml profiles and Temporal's own variables ----

/**
 * A team that reaches its cluster or Temporal Cloud with the `temporal` CLI already has a profile in
 * temporal.toml (TEMPORAL_CONFIG_FILE, else the user's config directory: ~/.config/temporalio/
 * temporal.toml on Linux; profile TEMPORAL_PROFILE, else "default") and perhaps Temporal's own
 * variables: the SDK's envconfig reads both, and the `temporal` section takes from them what our
 * variables leave unset. The five names both read (same meaning) are ours: validated by TemporalVars
 * and kept from envconfig, so what it gives comes from the file or from Temporal's other variables
 * (TEMPORAL_TLS_SERVER_CA_CERT_PATH/_DATA, TEMPORAL_TLS_CLIENT_CERT_PATH/_DATA,
 * TEMPORAL_TLS_CLIENT_KEY_PATH/_DATA, TEMPORAL_GRPC_META_*). Unlike the SDK, a TEMPORAL_CONFIG_FILE
 * that does not exist is refused (a mistyped path would quietly connect elsewhere), and every problem
 * of the file or profile is a problem naming it, never a stack trace.
 */
const SHARED_TEMPORAL_VARS: ReadonlySet<string> = new Set(['TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE', 'TEMPORAL_API_KEY', 'TEMPORAL_TLS', 'TEMPORAL_TLS_SERVER_NAME']);
const GRPC_META_PREFIX = 'TEMPORAL_GRPC_META_';

/** envconfig reads these from the environment the schemas pass it (loose objects): documented here, taken as they are. */
const TemporalEnvConfigVars = group(
  z.object({
    TEMPORAL_CONFIG_FILE: doc(
      z.string().optional(),
      'The temporal.toml whose profile gives what the TEMPORAL_* variables above leave unset (address, namespace, api_key, [tls], [grpc_meta]). A named file that is missing or malformed, or a bad value in it, stops the process, naming it.',
      { defaultText: '~/.config/temporalio/temporal.toml on Linux ($XDG_CONFIG_HOME/temporalio/ when set), if it exists' },
    ),
    TEMPORAL_PROFILE: doc(z.string().optional(), 'The profile of that file; an unknown one stops the process, naming the profiles the file has.', { defaultText: 'default' }),
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: doc(z.string().optional(), "Temporal's variable where TEMPORAL_TLS_CA_PATH is unset: the server's CA certificate, a PEM file."),
    TEMPORAL_TLS_SERVER_CA_CERT_DATA: doc(z.string().optional(), "Temporal's variable where TEMPORAL_TLS_CA_PATH is unset: the server's CA certificate, the PEM itself."),
    TEMPORAL_TLS_CLIENT_CERT_PATH: doc(z.string().optional(), "Temporal's variable where TEMPORAL_TLS_CERT_PATH is unset: the client certificate, a PEM file (with its key)."),
    TEMPORAL_TLS_CLIENT_CERT_DATA: doc(z.string().optional(), "Temporal's variable where TEMPORAL_TLS_CERT_PATH is unset: the client certificate, the PEM itself (with its key)."),
    TEMPORAL_TLS_CLIENT_KEY_PATH: doc(z.string().optional(), "Temporal's variable where TEMPORAL_TLS_KEY_PATH is unset: the client certificate's key, a PEM file."),
    TEMPORAL_TLS_CLIENT_KEY_DATA: doc(z.string().optional(), "Temporal's variable where TEMPORAL_TLS_KEY_PATH is unset: the client certificate's key, the PEM itself.", { secret: true }),
  }),
  "Temporal's own environment configuration",
  `The worker, the pipeline client, the CLI and the console read Temporal's environment configuration as the \`temporal\` CLI does (@temporalio/envconfig): a profile of temporal.toml and Temporal's own variables, below and ${GRPC_META_PREFIX}<HEADER> (gRPC metadata). They give what the TEMPORAL_* variables of the previous section leave unset. \`npm start\` ignores them (its stack is local).`,
);
const TEMPORAL_TLS_VARS = Object.keys(TemporalEnvConfigVars.shape).filter((name) => name.startsWith('TEMPORAL_TLS_'));

/** A setting Temporal's environment configuration gave, and where: `profile "x" of <file>` or Temporal's variables. */
export interface FromEnvConfig<T> {
  readonly value: T;
  readonly from: string;
}

/** The settings of Temporal's environment configuration that apply: each absent when it has none or ours is set. */
interface TemporalEnvConfig {
  readonly address?: FromEnvConfig<string>;
  readonly namespace?: FromEnvConfig<string>;
  readonly apiKey?: FromEnvConfig<string>;
  /** false: the profile's `tls.disabled = true`; true: it has TLS settings. */
  readonly tls?: FromEnvConfig<boolean>;
  readonly serverName?: FromEnvConfig<string>;
  readonly serverCa?: FromEnvConfig<Buffer>;
  readonly clientCertPair?: { readonly crt: FromEnvConfig<Buffer>; readonly key: FromEnvConfig<Buffer> };
  readonly metadata?: FromEnvConfig<Readonly<Record<string, string>>>;
}

/** Where envconfig looks when TEMPORAL_CONFIG_FILE is unset (its own rule, which it does not export). */
function defaultTemporalConfigFile(env: Readonly<Record<string, string>>): string | undefined {
  const os = platform();
  const dir =
    os === 'win32'
      ? env.APPDATA
      : os === 'darwin'
        ? env.HOME && join(env.HOME, 'Library', 'Application Support')
        : env.XDG_CONFIG_HOME
          ? isAbsolute(env.XDG_CONFIG_HOME)
            ? env.XDG_CONFIG_HOME
            : undefined
          : env.HOME && join(env.HOME, '.config');
  return dir ? join(dir, 'temporalio', 'temporal.toml') : undefined;
}

/** smol-toml's message, on one line: "Invalid TOML document: <what>\n\n<excerpt>". */
function tomlProblem(file: string, error: Error & { line?: number; column?: number }): string {
  const what = (error.message.split('\n')[0] ?? '').replace(/^Invalid TOML document:\s*/, '');
  return `${file} is not valid TOML: ${what}${error.line ? ` (line ${error.line}${error.column ? `, column ${error.column}` : ''})` : ''}`;
}

/** The profile names of a file that parsed, for a message. */
function profileNames(data: string): string {
  try {
    const names = Object.keys(loadTemporalConfigFile({ configSource: { data } }).profiles);
    return names.length > 0 ? `its profiles: ${names.join(', ')}` : 'it has no profiles';
  } catch {
    return 'it has no profiles';
  }
}

/**
 * Reads Temporal's environment configuration from `env` (the raw variables) for the settings whose
 * variable of ours is unset; undefined after adding a problem for each thing wrong with it.
 */
function temporalEnvConfig(env: Readonly<Record<string, unknown>>, ctx: z.RefinementCtx): TemporalEnvConfig | undefined {
  let ok = true;
  const problem = (label: string, message: string) => {
    ok = false;
    ctx.addIssue({ code: 'custom', path: [label], message });
  };
  const vars: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (typeof value === 'string' && !SHARED_TEMPORAL_VARS.has(name)) vars[name] = value;

  const named = vars.TEMPORAL_CONFIG_FILE?.trim() || undefined;
  const file = named ?? defaultTemporalConfigFile(vars);
  const fileLabel = named ? 'TEMPORAL_CONFIG_FILE' : `Temporal config file ${file} (TEMPORAL_CONFIG_FILE unset)`;
  let data: string | undefined;
  if (file !== undefined) {
    try {
      data = readFileSync(file, 'utf8');
    } catch (error) {
      // No file where the CLI would look is the usual case; one named on purpose must exist.
      if (named || (error as NodeJS.ErrnoException).code !== 'ENOENT') problem(fileLabel, cannotRead(file, error));
      if (named) return undefined;
    }
  }
  const profileName = vars.TEMPORAL_PROFILE?.trim() || undefined;
  if (profileName && data === undefined) {
    if (ok) problem('TEMPORAL_PROFILE', `no profile "${profileName}": there is no Temporal config file (TEMPORAL_CONFIG_FILE is unset${file ? ` and ${file} does not exist` : ''})`);
    return undefined;
  }
  if (!ok) return undefined;
  // What the settings below came from: the profile, or with no file, only Temporal's TLS and metadata variables.
  const where = data === undefined ? "Temporal's variables" : `profile "${profileName ?? 'default'}" of ${file}`;

  let profile: ClientConfigProfile;
  const load = (withFile: boolean) =>
    loadClientConfigProfile({ ...(withFile && data !== undefined ? { configSource: { data } } : { disableFile: true }), ...(profileName ? { profile: profileName } : {}), overrideEnvVars: vars });
  try {
    try {
      profile = load(true);
    } catch (error) {
      // envconfig 1.24 reads the file's `profile` table unchecked: a file without one is a file without profiles.
      if (!(error instanceof TypeError) || profileName) throw error;
      profile = load(false);
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (message.startsWith('Invalid TOML document') && file) problem(fileLabel, tomlProblem(file, error as Error));
    else if ((error instanceof TypeError || /^Profile '.*' not found/.test(message)) && data !== undefined) problem('TEMPORAL_PROFILE', `no profile "${profileName}" in ${file} (${profileNames(data)})`);
    else problem(where, message);
    return undefined;
  }

  /** The profile's `key`, checked by `schema`, or a problem naming the profile and the key. */
  const take = <T>(schema: z.ZodType<T>, value: unknown, key: string): FromEnvConfig<T> | undefined => {
    if (value === undefined) return undefined;
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) problem(`${where}: ${key}`, issue.message);
      return undefined;
    }
    return { value: parsed.data, from: where };
  };
  /** A PEM the profile names (a path or inline data), read now so a bad one stops start-up like ours. */
  const pem = (source: ConfigDataSource | undefined, key: string, envVar: string): FromEnvConfig<Buffer> | undefined => {
    if (source === undefined) return undefined;
    const viaPath = 'path' in source;
    const fromVar = `${envVar}_${viaPath ? 'PATH' : 'DATA'}`;
    const label = vars[fromVar] !== undefined ? fromVar : `${where}: ${key}_${viaPath ? 'path' : 'data'}`;
    let bytes: Buffer;
    if (viaPath) {
      if (typeof source.path !== 'string') return void problem(label, 'must be a string');
      try {
        bytes = readFileSync(source.path);
      } catch (error) {
        return void problem(label, cannotRead(source.path, error));
      }
    } else {
      bytes = Buffer.from(source.data);
    }
    if (!bytes.toString('utf8').includes('-----BEGIN ')) return void problem(label, `${viaPath ? `${source.path} is` : 'is'} not PEM (no -----BEGIN line)`);
    return { value: bytes, from: label === fromVar ? fromVar : where };
  };

  const NonEmptyString = z.string().trim().min(1, { message: 'must not be empty' });
  const tls = profile.tls;
  if (tls?.disabled !== undefined && typeof tls.disabled !== 'boolean') problem(`${where}: tls.disabled`, 'must be true or false');
  // Our TEMPORAL_TLS=false turns the profile's TLS off, its CA, name and certificate with it.
  const tlsApplies = tls !== undefined && tls.disabled !== true && env.TEMPORAL_TLS !== false;
  const tlsVars = TEMPORAL_TLS_VARS.filter((name) => vars[name] !== undefined);
  const tlsFrom = [...(data === undefined ? [] : [where]), ...tlsVars].join(', ') || where;
  const certPairApplies = tlsApplies && env.TEMPORAL_TLS_CERT_PATH === undefined;
  const crt = certPairApplies ? pem(tls.clientCert, 'tls.client_cert', 'TEMPORAL_TLS_CLIENT_CERT') : undefined;
  const key = certPairApplies ? pem(tls.clientKey, 'tls.client_key', 'TEMPORAL_TLS_CLIENT_KEY') : undefined;
  if (certPairApplies && Boolean(tls.clientCert) !== Boolean(tls.clientKey)) problem(`${where}: tls`, 'a client certificate and its key go together (client_cert_* and client_key_*; TEMPORAL_TLS_CLIENT_CERT_* and TEMPORAL_TLS_CLIENT_KEY_*)');
  const metaFrom = [...(data === undefined ? [] : [where]), ...(Object.keys(vars).some((name) => name.startsWith(GRPC_META_PREFIX)) ? [`${GRPC_META_PREFIX}*`] : [])].join(', ') || where;
  const metadata = profile.grpcMeta && Object.keys(profile.grpcMeta).length > 0 ? take(z.record(z.string(), z.string()), profile.grpcMeta, 'grpc_meta') : undefined;

  const config: TemporalEnvConfig = {
    ...(env.TEMPORAL_ADDRESS === undefined ? { address: take(HostPort, profile.address, 'address') } : {}),
    ...(env.TEMPORAL_NAMESPACE === undefined ? { namespace: take(NonEmptyString, profile.namespace, 'namespace') } : {}),
    ...(env.TEMPORAL_API_KEY === undefined ? { apiKey: take(NonEmptyString, profile.apiKey, 'api_key') } : {}),
    ...(env.TEMPORAL_TLS === undefined && tls !== undefined ? { tls: { value: tls.disabled !== true, from: tls.disabled === true ? where : tlsFrom } } : {}),
    ...(tlsApplies && env.TEMPORAL_TLS_SERVER_NAME === undefined ? { serverName: take(HostName, tls.serverName, 'tls.server_name') } : {}),
    ...(tlsApplies && env.TEMPORAL_TLS_CA_PATH === undefined ? { serverCa: pem(tls.serverCACert, 'tls.server_ca_cert', 'TEMPORAL_TLS_SERVER_CA_CERT') } : {}),
    ...(crt && key ? { clientCertPair: { crt, key } } : {}),
    ...(metadata ? { metadata: { value: Object.freeze(metadata.value), from: metaFrom } } : {}),
  };
  if (!ok) return undefined;
  // Absent, not undefined, where nothing was given.
  return Object.freeze(Object.fromEntries(Object.entries(config).filter((entry) => entry[1] !== undefined)) as TemporalEnvConfig);
}

/** Ours and Temporal's environment configuration, resolved: what temporalSection reads. */
type ResolvedTemporalVars = TemporalVars & { readonly TEMPORAL_ADDRESS: string; readonly TEMPORAL_ENV_CONFIG: TemporalEnvConfig };

/**
 * Settles where Temporal is before anything decides by it (encryption and the payload store ask
 * whether it is on this machine): our TEMPORAL_ADDRESS, else the profile's, else localhost:7233. The
 * schemas that call it are loose objects, so `env` still holds the variables envconfig reads.
 */
function withTemporalEnvConfig<E extends Record<string, unknown> & { readonly TEMPORAL_ADDRESS?: string | undefined }>(env: E, ctx: z.RefinementCtx) {
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
function temporalSection(env: ResolvedTemporalVars) {
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

// ---- payload encryption (shared by worker, client/CLI and console) -----------------------------

/** AES-256: a key is exactly this many bytes. */
export const PAYLOAD_KEY_BYTES = 32;
const KEY_HINT = 'generate one with `openssl rand -base64 32`';
const KEY_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
const KEY_ID_RULE = 'must be 1 to 64 letters, digits, ".", "_" or "-"';

/** Standard or URL-safe base64 of exactly 32 bytes → the key, or a message saying what is wrong. */
function decodeKey(text: string): Buffer | string {
  if (!/^(?:[A-Za-z0-9+/]+|[A-Za-z0-9_-]+)={0,2}$/.test(text)) return `must be base64 (${KEY_HINT})`;
  const key = Buffer.from(text, 'base64');
  if (key.length !== PAYLOAD_KEY_BYTES) return `must be base64 of exactly ${PAYLOAD_KEY_BYTES} bytes, got ${key.length} bytes (${KEY_HINT})`;
  return key;
}

const EncryptionKey = z.string().trim().transform((text, ctx) => {
  const key = decodeKey(text);
  if (typeof key === 'string') {
    ctx.addIssue({ code: 'custom', message: key });
    return z.NEVER;
  }
  return key;
});

/** `id:base64,id:base64`: earlier keys, kept to decrypt what they encrypted. */
const DecryptionKeys = z.string().transform((text, ctx) => {
  const keys = new Map<string, Buffer>();
  for (const [index, raw] of text.split(',').entries()) {
    const entry = raw.trim();
    if (entry === '') continue;
    const colon = entry.indexOf(':');
    const id = colon < 0 ? '' : entry.slice(0, colon).trim();
    const where = `entry ${index + 1}${id ? ` (key id ${id})` : ''}`;
    if (colon < 0) {
      ctx.addIssue({ code: 'custom', message: `${where} must be <key id>:<base64 key>` });
      continue;
    }
    if (!KEY_ID_PATTERN.test(id)) {
      ctx.addIssue({ code: 'custom', message: `${where}: the key id ${KEY_ID_RULE}` });
      continue;
    }
    if (keys.has(id)) {
      ctx.addIssue({ code: 'custom', message: `key id ${id} appears twice` });
      continue;
    }
    const key = decodeKey(entry.slice(colon + 1).trim());
    if (typeof key === 'string') ctx.addIssue({ code: 'custom', message: `${where}: the key ${key}` });
    else keys.set(id, key);
  }
  return keys;
});

/** The encryption variables, part of each process's schema. */
const EncryptionVars = group(
  z.object({
    PAYLOAD_ENCRYPTION: doc(
      z.enum(['auto', 'off']).default('auto'),
      '"auto": encrypt with PAYLOAD_ENCRYPTION_KEY if set; else, with Temporal on this machine, with a key generated once into PAYLOAD_ENCRYPTION_KEY_FILE; else the process refuses to start. "off" stores payloads in clear (anyone who can read Temporal reads them).',
    ),
    PAYLOAD_ENCRYPTION_KEY_FILE: doc(z.string().trim().min(1).default('.temporal/payload-encryption.key'), 'Where the generated local key of a stack on this machine is kept (created once, mode 0600).'),
    PAYLOAD_ENCRYPTION_KEY: doc(
      EncryptionKey.optional(),
      `Base64 of exactly ${PAYLOAD_KEY_BYTES} bytes: \`openssl rand -base64 32\`. The worker, the clients, the CLI and the console need the same keys.`,
      { secret: true },
    ),
    PAYLOAD_ENCRYPTION_KEY_ID: doc(
      z.string().trim().regex(KEY_ID_PATTERN, { message: KEY_ID_RULE }).default('default'),
      'Written next to each encrypted payload (1-64 of A-Z a-z 0-9 . _ -), so a later key can get another id: give every new key a new id.',
    ),
    PAYLOAD_DECRYPTION_KEYS: doc(DecryptionKeys.optional(), 'Earlier keys, for rotation: comma-separated <key id>:<base64 key>, used to decrypt only (never to encrypt).', { secret: true }),
  }),
  'Payload encryption',
  'On by default: every payload Temporal stores (workflow input with the bank password, MFA answers, activity inputs and results, the result with holder PII and transactions, failure messages) is AES-256-GCM encrypted.',
);
/** Encryption and the payload store decide by where Temporal is, so they read its address too. */
type EncryptionVars = z.output<typeof EncryptionVars> & { readonly TEMPORAL_ADDRESS: string };

/** Whether Temporal runs on this machine: only then may a generated local key stand in for a real one. */
function isLoopback(address: string): boolean {
  const host = address.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

function checkEncryption(env: EncryptionVars, ctx: z.RefinementCtx): void {
  if (env.PAYLOAD_ENCRYPTION === 'off' && env.PAYLOAD_ENCRYPTION_KEY) {
    ctx.addIssue({ code: 'custom', path: ['PAYLOAD_ENCRYPTION'], message: 'is off but PAYLOAD_ENCRYPTION_KEY is set: unset one of them' });
  }
  if (env.PAYLOAD_ENCRYPTION === 'auto' && !env.PAYLOAD_ENCRYPTION_KEY && !isLoopback(env.TEMPORAL_ADDRESS)) {
    ctx.addIssue({
      code: 'custom',
      path: ['PAYLOAD_ENCRYPTION_KEY'],
      message:
        `is required with Temporal at ${env.TEMPORAL_ADDRESS}, not on this machine: without it bank passwords, MFA answers and holder data ` +
        `would be stored there in clear (${KEY_HINT}; the same key for the worker, clients and console). PAYLOAD_ENCRYPTION=off stores them in clear on purpose`,
    });
  }
  if (env.PAYLOAD_DECRYPTION_KEYS && env.PAYLOAD_DECRYPTION_KEYS.size > 0 && !env.PAYLOAD_ENCRYPTION_KEY) {
    ctx.addIssue({ code: 'custom', path: ['PAYLOAD_DECRYPTION_KEYS'], message: 'needs PAYLOAD_ENCRYPTION_KEY (the current key) as well' });
  }
  if (env.PAYLOAD_DECRYPTION_KEYS?.has(env.PAYLOAD_ENCRYPTION_KEY_ID)) {
    ctx.addIssue({
      code: 'custom',
      path: ['PAYLOAD_DECRYPTION_KEYS'],
      message: `key id ${env.PAYLOAD_ENCRYPTION_KEY_ID} is the current PAYLOAD_ENCRYPTION_KEY_ID; give each key its own id`,
    });
  }
}

/**
 * The `encryption` section: the codec's keys, or no section when encryption is off. "auto" without a
 * key (which checkEncryption let through only with Temporal on this machine) reads the local key
 * file, creating it if missing: a side effect of parsing, so a damaged file is one more problem
 * naming its variable, and a refused configuration never creates one.
 */
function encryptionSection(env: EncryptionVars, ctx: z.RefinementCtx): { encryption?: EncryptionKeys } {
  if (env.PAYLOAD_ENCRYPTION === 'off') return {};
  const decryptionKeys = env.PAYLOAD_DECRYPTION_KEYS ?? new Map<string, Buffer>();
  if (env.PAYLOAD_ENCRYPTION_KEY) return { encryption: Object.freeze({ keyId: env.PAYLOAD_ENCRYPTION_KEY_ID, key: env.PAYLOAD_ENCRYPTION_KEY, decryptionKeys }) };
  try {
    const local = readOrCreateLocalKey(env.PAYLOAD_ENCRYPTION_KEY_FILE);
    return { encryption: Object.freeze({ keyId: local.keyId, key: local.key, decryptionKeys }) };
  } catch (error) {
    if (!(error instanceof LocalKeyFileError)) throw error;
    ctx.addIssue({ code: 'custom', path: ['PAYLOAD_ENCRYPTION_KEY_FILE'], message: error.message });
    return {};
  }
}

// ---- payload store: large payloads outside Temporal history (shared by worker, client/CLI and console)

const PayloadStoreVars = group(
  z.object({
    PAYLOAD_STORE: doc(
      z.enum(['auto', 'local', 's3', 'off']).default('auto'),
      '"auto": a local directory with Temporal on this machine (the dev stack), none with Temporal elsewhere (a directory is one machine\'s: several workers need "s3"); "local", "s3" or "off" to choose. Without a store a product larger than history can hold ends its connection as ResultTooLarge.',
    ),
    PAYLOAD_STORE_DIRECTORY: doc(z.string().trim().min(1).default('.temporal/payloads'), 'The local store: it must live as long as the histories that point into it (beside the dev server\'s database).'),
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
  'Every process that writes or reads workflow payloads (worker, pipeline client, CLI, console) needs the same settings: a process without them fails on a stored payload.',
);
type PayloadStoreVars = z.output<typeof PayloadStoreVars> & { readonly TEMPORAL_ADDRESS: string };

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
function payloadSections(env: EncryptionVars & PayloadStoreVars, ctx: z.RefinementCtx) {
  return { ...encryptionSection(env, ctx), payloadStore: payloadStoreSection(env) };
}

function checkPayloads(env: EncryptionVars & PayloadStoreVars, ctx: z.RefinementCtx): void {
  checkEncryption(env, ctx);
  checkPayloadStore(env, ctx);
}

// ---- tracing: OpenTelemetry spans over OTLP (worker and client/CLI/console) -------------------------

/**
 * The standard OpenTelemetry variables. Tracing is off (no provider, nothing exported) unless an
 * endpoint is set. Spans go out as OTLP JSON over HTTP (a collector's or Jaeger's port 4318); the
 * exporter itself reads OTEL_EXPORTER_OTLP_HEADERS (a collector's credentials stay out of this config).
 */
const OtlpProtocol = doc(
  z.literal('http/json', { message: 'must be http/json (spans are exported as OTLP JSON over HTTP) or unset' }).optional(),
  'Only http/json is supported (unset means http/json here); grpc or http/protobuf stop the process.',
);
const TracingVars = group(
  z.object({
    OTEL_EXPORTER_OTLP_ENDPOINT: doc(z.url({ protocol: /^https?$/, message: 'must be an http(s) URL such as http://localhost:4318' }).optional(), 'Base URL of a collector (or Jaeger\'s port 4318): traces go to <endpoint>/v1/traces.'),
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: doc(
      z.url({ protocol: /^https?$/, message: 'must be an http(s) URL such as http://localhost:4318/v1/traces' }).optional(),
      'The traces URL itself, used as is; wins over OTEL_EXPORTER_OTLP_ENDPOINT.',
    ),
    OTEL_EXPORTER_OTLP_PROTOCOL: OtlpProtocol,
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: OtlpProtocol,
    OTEL_SERVICE_NAME: doc(z.string().trim().min(1).optional(), 'The service name of the spans.', { defaultText: 'aggregation-connections-worker for the worker, aggregation-connections-client otherwise' }),
    OTEL_SDK_DISABLED: doc(Bool.default(false), 'true turns tracing off whatever the endpoint.'),
    OTEL_EXPORTER_OTLP_HEADERS: doc(z.string().optional(), 'Headers for the collector, e.g. authorization=Bearer%20<token>: read by the exporter itself (a collector\'s credentials stay out of this configuration).', {
      secret: true,
    }),
  }),
  'Tracing: OpenTelemetry over OTLP',
  'Off unless an endpoint is set (no provider, nothing exported). Spans go out as OTLP JSON over HTTP.',
);
type TracingVars = z.output<typeof TracingVars>;

/** The `tracing` section: where spans go and under which service name; absent when tracing is off. */
function tracingSection(env: TracingVars, defaultServiceName: string): { tracing?: { readonly endpoint: string; readonly serviceName: string } } {
  // The OTLP spec: a base endpoint gets the signal's path appended; a per-signal one is used as is.
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (base === undefined ? undefined : `${base.replace(/\/+$/, '')}/v1/traces`);
  if (env.OTEL_SDK_DISABLED || endpoint === undefined) return {};
  return { tracing: Object.freeze({ endpoint, serviceName: env.OTEL_SERVICE_NAME ?? defaultServiceName }) };
}

/** What src/tracing/ reads (the worker's and the client's `tracing` section). */
export type TracingConfig = NonNullable<ReturnType<typeof tracingSection>['tracing']>;

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

// ---- retention policy (worker): forget a tenant's login N days after its last retrieval ---------

const RETENTION_RULE = 'must be a comma-separated list of <customerId>:<days> (or *:<days> for every other tenant), days from 1 to 36500';
/** `lender-a:90,lender-b:30,*:365` → days per customer id ('*': any other tenant). Off (empty) by default. */
const RetentionDays = z.string().transform((text, ctx) => {
  const days = new Map<string, number>();
  for (const raw of text.split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const match = /^([A-Za-z0-9][A-Za-z0-9._-]*|\*):(\d{1,5})$/.exec(entry);
    const value = Number(match?.[2]);
    if (!match?.[1] || value < 1 || value > 36_500) ctx.addIssue({ code: 'custom', message: `${JSON.stringify(entry)}: ${RETENTION_RULE}` });
    else if (days.has(match[1])) ctx.addIssue({ code: 'custom', message: `${match[1]} appears twice` });
    else days.set(match[1], value);
  }
  return days;
});

/** Days a tenant keeps a login after its last retrieval, or undefined when it has no policy. */
export function retentionDaysOf(policy: ReadonlyMap<string, number>, customerId: string): number | undefined {
  return policy.get(customerId) ?? policy.get('*');
}

const NonEmpty = z.string().trim().min(1, { message: 'must not be empty' });

// ---- priority and fairness (src/contract/priority.ts) -------------------------------------------

const PriorityKey = z.coerce
  .number({ message: 'must be an integer from 1 (first) to 5 (last)' })
  .int({ message: 'must be an integer from 1 (first) to 5 (last)' })
  .min(PRIORITY_KEY_LIMITS.min, { message: 'must be an integer from 1 (first) to 5 (last)' })
  .max(PRIORITY_KEY_LIMITS.max, { message: 'must be an integer from 1 (first) to 5 (last)' });
const WEIGHT_RULE = `must be a comma-separated list of <customerId>:<weight> (or *:<weight> for every other tenant), weights from ${FAIRNESS_WEIGHT_LIMITS.min} to ${FAIRNESS_WEIGHT_LIMITS.max}`;
/** `lender-a:3,*:1` → fairness weight per customer id ('*': any other tenant; 1 where neither is set). */
const TenantWeights = z.string().transform((text, ctx) => {
  const weights = new Map<string, number>();
  for (const raw of text.split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const match = /^([A-Za-z0-9][A-Za-z0-9._-]*|\*):(\d+(?:\.\d+)?)$/.exec(entry);
    const value = Number(match?.[2]);
    if (!match?.[1] || !(value >= FAIRNESS_WEIGHT_LIMITS.min && value <= FAIRNESS_WEIGHT_LIMITS.max)) ctx.addIssue({ code: 'custom', message: `${JSON.stringify(entry)}: ${WEIGHT_RULE}` });
    else if (weights.has(match[1])) ctx.addIssue({ code: 'custom', message: `${match[1]} appears twice` });
    else weights.set(match[1], value);
  }
  return weights;
});

const PriorityVars = group(
  z.object({
    PRIORITY_LIVE: doc(PriorityKey.default(DEFAULT_PRIORITY_KEYS.live), 'Priority key of a connection an end user waits on, answering challenges.'),
    PRIORITY_PIPELINE: doc(PriorityKey.default(DEFAULT_PRIORITY_KEYS.pipeline), "Priority key of a pipeline's cached retrieval."),
    PRIORITY_SCHEDULED: doc(PriorityKey.default(DEFAULT_PRIORITY_KEYS.scheduled), 'Priority key of an unattended scheduled refresh.'),
    PRIORITY_MAINTENANCE: doc(PriorityKey.default(DEFAULT_PRIORITY_KEYS.maintenance), 'Priority key of forget and retention.'),
    TENANT_WEIGHTS: doc(
      TenantWeights.default(new Map()),
      `Fairness weights of the tenants sharing the fleet: <customerId>:<weight>, comma-separated, *:<weight> for every other tenant, weights ${FAIRNESS_WEIGHT_LIMITS.min}..${FAIRNESS_WEIGHT_LIMITS.max}. A tenant of weight 3 gets three times the dispatches of a tenant of weight 1 when both have work waiting, and three times the tenant budget.`,
      { defaultText: 'every tenant 1' },
    ),
  }),
  'Priority and fairness',
  "Task Queue priority keys by who waits, 1 served first, 5 last (activities inherit their connection's; a start may override it: StartOptions.priority), and the tenants' fairness weights (docs/fleet.md).",
);

const Rps = z.coerce
  .number({ message: 'must be a number of requests per second, from 0.1 to 100000' })
  .min(0.1, { message: 'must be a number of requests per second, from 0.1 to 100000' })
  .max(100_000, { message: 'must be a number of requests per second, from 0.1 to 100000' });

const Burst = z.coerce
  .number({ message: 'must be a number of requests, from 1 to 100000' })
  .min(1, { message: 'must be a number of requests, from 1 to 100000' })
  .max(100_000, { message: 'must be a number of requests, from 1 to 100000' });

const BudgetVars = group(
  z.object({
    SERVICE_BUDGET_RPS: doc(
      Rps.optional(),
      'Requests a second the whole fleet may send the service (every tenant together), held by Temporal on the task queue across all workers; each worker sets it at start.',
      { defaultText: 'no budget' },
    ),
    SERVICE_BUDGET_TENANT_RPS: doc(Rps.optional(), 'Requests a second one tenant of weight 1 may send (times its TENANT_WEIGHTS weight); at most SERVICE_BUDGET_RPS.', { defaultText: 'SERVICE_BUDGET_RPS' }),
    SERVICE_BUDGET_MODE: doc(
      z.enum(['bucket', 'strict'], { error: 'must be bucket or strict' }).default('bucket'),
      "How the service counts: bucket, a token bucket of SERVICE_BUDGET_RPS a second taking up to SERVICE_BUDGET_BURST at once (the fleet averages (burst - 1) / 1.05 of it, 90% of a budget of 20 with the default burst); strict, at most SERVICE_BUDGET_RPS in any whole second (the fleet averages about half of it, to absorb Temporal's one-second burst).",
    ),
    SERVICE_BUDGET_BURST: doc(
      Burst.optional(),
      'Requests the service takes from the fleet at once (the size of its bucket), in bucket mode only; each tenant gets the same share of it as of the rate.',
      { defaultText: "SERVICE_BUDGET_RPS (one second's worth)" },
    ),
  }),
  'Request budget',
  "The fleet's request budget toward the aggregation service (docs/fleet.md).",
);

/** The fleet's request budget (src/budget/fleet-budget.ts), or undefined when none is configured. */
function budgetSection(env: z.output<typeof BudgetVars>, ctx: z.core.$RefinementCtx) {
  if (env.SERVICE_BUDGET_MODE === 'strict' && env.SERVICE_BUDGET_BURST !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['SERVICE_BUDGET_BURST'], message: 'applies to SERVICE_BUDGET_MODE=bucket only (a strict service takes no burst)' });
  }
  if (env.SERVICE_BUDGET_RPS === undefined) {
    for (const name of ['SERVICE_BUDGET_TENANT_RPS', 'SERVICE_BUDGET_BURST'] as const) {
      if (env[name] !== undefined) ctx.addIssue({ code: 'custom', path: [name], message: 'needs SERVICE_BUDGET_RPS (the whole fleet\'s budget) too' });
    }
    return undefined;
  }
  const tenantRps = env.SERVICE_BUDGET_TENANT_RPS ?? env.SERVICE_BUDGET_RPS;
  if (tenantRps > env.SERVICE_BUDGET_RPS) ctx.addIssue({ code: 'custom', path: ['SERVICE_BUDGET_TENANT_RPS'], message: `must not exceed SERVICE_BUDGET_RPS (${env.SERVICE_BUDGET_RPS})` });
  if (env.SERVICE_BUDGET_MODE === 'strict') return Object.freeze({ totalRps: env.SERVICE_BUDGET_RPS, tenantRps, mode: 'strict' as const });
  return Object.freeze({ totalRps: env.SERVICE_BUDGET_RPS, tenantRps, mode: 'bucket' as const, burst: env.SERVICE_BUDGET_BURST ?? env.SERVICE_BUDGET_RPS });
}

const WindowSize = z.coerce
  .number({ message: `must be a whole number from ${WINDOW_LIMITS.min} to ${WINDOW_LIMITS.max}` })
  .int({ message: `must be a whole number from ${WINDOW_LIMITS.min} to ${WINDOW_LIMITS.max}` })
  .min(WINDOW_LIMITS.min, { message: `must be a whole number from ${WINDOW_LIMITS.min} to ${WINDOW_LIMITS.max}` })
  .max(WINDOW_LIMITS.max, { message: `must be a whole number from ${WINDOW_LIMITS.min} to ${WINDOW_LIMITS.max}` });

const BookVars = group(
  z.object({
    BOOK_WINDOW_FLOOR: doc(WindowSize.default(DEFAULT_WINDOW_BOUNDS.floor), 'Fewest connections a book refresh keeps in flight (while the book has more), however slow the fleet or the service.'),
    BOOK_WINDOW_CEILING: doc(WindowSize.default(DEFAULT_WINDOW_BOUNDS.ceiling), 'Most connections a book refresh keeps in flight, however fast children finish.'),
    BOOK_WINDOW_START: doc(WindowSize.default(DEFAULT_WINDOW_BOUNDS.start), 'Connections in flight when a book refresh begins; the window grows or shrinks from there.'),
    BOOK_PAGE_SIZE: doc(
      z.coerce.number().int().min(BOOK_PAGE_SIZE_LIMITS.min, { message: `must be a whole number from ${BOOK_PAGE_SIZE_LIMITS.min} to ${BOOK_PAGE_SIZE_LIMITS.max}` }).max(BOOK_PAGE_SIZE_LIMITS.max, { message: `must be a whole number from ${BOOK_PAGE_SIZE_LIMITS.min} to ${BOOK_PAGE_SIZE_LIMITS.max}` }).default(DEFAULT_BOOK_PAGE_SIZE),
      'Logins a book refresh reads, starts and drains per run before it continues as new (one report page each).',
    ),
  }),
  'Book refresh',
  "The window and page size of book refreshes whose Schedule or run names none; written into each book's Schedule when it is created (docs/fleet.md).",
);

/** The book refresh's defaults, checked as a whole (floor ≤ start ≤ ceiling). */
function bookSection(env: z.output<typeof BookVars>, ctx: z.core.$RefinementCtx) {
  if (env.BOOK_WINDOW_FLOOR > env.BOOK_WINDOW_CEILING) ctx.addIssue({ code: 'custom', path: ['BOOK_WINDOW_FLOOR'], message: `must not exceed BOOK_WINDOW_CEILING (${env.BOOK_WINDOW_CEILING})` });
  if (env.BOOK_WINDOW_START < env.BOOK_WINDOW_FLOOR || env.BOOK_WINDOW_START > env.BOOK_WINDOW_CEILING) {
    ctx.addIssue({ code: 'custom', path: ['BOOK_WINDOW_START'], message: `must be from BOOK_WINDOW_FLOOR (${env.BOOK_WINDOW_FLOOR}) to BOOK_WINDOW_CEILING (${env.BOOK_WINDOW_CEILING})` });
  }
  return Object.freeze({ window: Object.freeze({ floor: env.BOOK_WINDOW_FLOOR, ceiling: env.BOOK_WINDOW_CEILING, start: env.BOOK_WINDOW_START }), pageSize: env.BOOK_PAGE_SIZE });
}

function prioritySection(env: z.output<typeof PriorityVars>): PriorityPolicy {
  return Object.freeze({
    keys: Object.freeze({ live: env.PRIORITY_LIVE, pipeline: env.PRIORITY_PIPELINE, scheduled: env.PRIORITY_SCHEDULED, maintenance: env.PRIORITY_MAINTENANCE }),
    tenantWeights: env.TENANT_WEIGHTS,
  });
}

// ---- worker deployment (Worker Deployment Versioning) -------------------------------------------

/** Temporal joins the two as `name:buildId` (and once as `name.buildId`), so neither may hold `:` or `.`. */
const DEPLOYMENT_PART = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const DEPLOYMENT_PART_RULE = 'must be 1-64 letters, digits, - or _';
const DeploymentName = z.string().trim().regex(DEPLOYMENT_PART, { message: DEPLOYMENT_PART_RULE });
const BuildId = z.string().trim().regex(DEPLOYMENT_PART, { message: DEPLOYMENT_PART_RULE });

const DeploymentVars = z.object({
  WORKER_DEPLOYMENT_NAME: doc(
    DeploymentName.optional(),
    "Worker Deployment Versioning: the deployment this fleet's builds belong to (one per task queue by default). Connections stay on the build they started on (Pinned); retention timers and forgets move to the current build (AutoUpgrade).",
    { defaultText: 'TEMPORAL_TASK_QUEUE' },
  ),
});

function deploymentSection(env: z.output<typeof DeploymentVars>, taskQueue: string, ctx: z.core.$RefinementCtx) {
  const name = env.WORKER_DEPLOYMENT_NAME ?? taskQueue;
  if (!DEPLOYMENT_PART.test(name)) {
    ctx.addIssue({ code: 'custom', path: ['WORKER_DEPLOYMENT_NAME'], message: `unset, it is the task queue's name ${JSON.stringify(name)}, which ${DEPLOYMENT_PART_RULE}: set WORKER_DEPLOYMENT_NAME` });
  }
  return Object.freeze({ name });
}

// ---- processes ---------------------------------------------------------------------------------

const CustomerId = doc(
  NonEmpty.default('demo-lender'),
  'The tenant (the customer id path segment) the CLI, the demo and pipelines start connections for unless told otherwise; the worker serves whichever tenant a connection names.',
);

const AggregatorVars = group(
  z.object({
    AGGREGATOR_BASE_URL: doc(
      z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).default('http://127.0.0.1:4010'),
      'The aggregation service: the sandbox of `npm start` / `npm run sandbox` by default; point it at the real service in production.',
    ),
    AGGREGATOR_CUSTOMER_ID: CustomerId,
    AGGREGATOR_AUTH_HEADER: doc(
      z.string().trim().regex(/^[A-Za-z0-9-]+$/, { message: 'must be an HTTP header name' }).default('x-api-key'),
      "The header that carries the calling application's credential.",
    ),
    AGGREGATOR_AUTH_SECRET: doc(z.string().min(1).optional(), "The calling application's credential, sent in AGGREGATOR_AUTH_HEADER; unset: no header.", { secret: true }),
    AGGREGATOR_TIMEOUT_MS: doc(
      z.coerce.number().int().min(100).max(600_000).default(60_000),
      'Per-request timeout in ms (100..600000); the service may run a sync call ~210 s before dispatching it.',
    ),
  }),
  'The aggregation service',
  "Where the worker's activities call the service, and as whom.",
);

const WorkerVars = group(
  z.object({
    WORKER_METRICS_HOST: doc(z.string().trim().min(1).default('127.0.0.1'), 'The address the Prometheus metrics endpoint listens on.'),
    WORKER_METRICS_PORT: WorkerMetricsPort,
    WORKER_STATUS_GAUGE_INTERVAL_S: doc(
      z.coerce.number().int().min(0).max(3600).default(15),
      'Seconds between two counts of the running connections by status (visibility count queries, one per status, fleet-wide) for the aggregation_connections gauge of the metrics endpoint (docs/metrics.md); 0 turns the counting off, and so does WORKER_METRICS_PORT=0.',
    ),
    WORKER_HEALTH_HOST: doc(z.string().trim().min(1).default('127.0.0.1'), 'The address the health endpoint listens on.'),
    WORKER_HEALTH_PORT: doc(
      Port.default(0),
      'GET http://WORKER_HEALTH_HOST:WORKER_HEALTH_PORT/healthz: 200 {"state":"RUNNING"} while the worker runs, 503 with its state while it starts or SIGTERM drains it (src/worker/health.ts); 0 turns it off (the image sets 8081 for its HEALTHCHECK).',
    ),
    WORKER_WORKFLOW_BUNDLE: doc(
      z.string().trim().min(1).optional(),
      'A prebuilt workflow bundle (production: `npm run build` writes dist/workflow-bundle.js; the image sets it).',
      { defaultText: 'the worker bundles the workflows at start' },
    ),
    ...DeploymentVars.shape,
    WORKER_BUILD_ID: doc(BuildId.optional(), "This build's id.", { defaultText: 'a hash of the workflow bundle, so it changes exactly when that code does' }),
    WORKER_BECOME_CURRENT: doc(
      z.enum(['no', 'when-unset', 'yes'], { error: 'must be no, when-unset or yes' }).default('when-unset'),
      'Whether this worker makes its own build current once it polls: `when-unset` only while the deployment has no current version (a first deploy; later builds wait for `npm run cli -- deployment set-current <buildId>` or a ramp), `yes` always (a stack on one machine), `no` never.',
    ),
    WORKER_MAX_CACHED_WORKFLOWS: doc(
      z.coerce.number().int().min(0).max(100_000).optional(),
      "Workflows kept in the worker's cache. To bound the worker's memory, cap the heap AND set this to the pending connections you expect: NODE_OPTIONS=\"--max-old-space-size=192 --max-semi-space-size=4\" MALLOC_ARENA_MAX=2 with 2100 held 2,000 pending connections in 526 MiB RSS instead of 929-961 (docs/benchmarks.md). The worker warns at start when the heap is capped below 1 GiB and this is unset.",
      { defaultText: "the SDK's, sized from the heap limit: ~2,300 at Node's default 4 GiB, 32 at 256 MiB" },
    ),
    WORKER_WORKFLOW_THREADS: doc(z.coerce.number().int().min(1).max(16).optional(), 'Threads running workflow code; 2 spreads activations over two cores.', { defaultText: "the SDK's, 1" }),
    WORKER_MAX_CONCURRENT_ACTIVITIES: doc(
      z.coerce.number().int().min(1).max(100_000).optional(),
      'Activities run at once; the heartbeat polling strategy holds one per pending connection.',
      { defaultText: "the SDK's, 100" },
    ),
    WORKER_WORKFLOW_POLLERS: doc(z.coerce.number().int().min(2).max(100).optional(), 'Long polls for workflow tasks.', { defaultText: "the SDK's, 10" }),
    WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: doc(
      z.coerce.number().int().min(2).max(1_000).optional(),
      "Workflow tasks a worker holds at once. Few keep a burst's backlog on the server, where priority and fairness order it, instead of in the worker's own queue, which serves in arrival order: at half the burst benchmark's size a live answer waited p50 312 ms with 4 against 2,663 ms with the SDK's 40 (docs/fleet.md). A worker runs workflow code on one thread, so more only overlap the round trips.",
      { defaultText: `${DEFAULT_WORKFLOW_TASK_SLOTS} (the SDK's is 40); none with WORKER_RESOURCE_TUNER` },
    ),
    WORKER_STICKY_TIMEOUT_MS: doc(
      z.coerce.number().int().min(100).max(600_000).optional(),
      "How long a workflow task waits on its worker's own (sticky) queue before the server hands it to the shared one. Sticky queues have no fairness (server 1.32.2: a sticky partition does not support it), so a tenant's tasks queued behind another's there are not served by weight; a short wait moves them soon to the shared queue, where fairness orders them, at the cost of a replay when another worker takes it. At half the burst benchmark's size, 1 s instead of the SDK's 10 s took tenant B's median from 15.9 s to 3.8 s and a live answer's p50 from 312 to 118 ms, for 4% more CPU per connection (docs/fleet.md).",
      { defaultText: `${DEFAULT_STICKY_TIMEOUT_MS} (the SDK's is 10 s)` },
    ),
    WORKER_RESOURCE_TUNER: doc(
      z
        .string()
        .trim()
        .regex(/^(0?\.\d+|1(\.0+)?),(0?\.\d+|1(\.0+)?)$/, { message: 'must be two fractions "memory,cpu", e.g. 0.8,0.9' })
        .transform((value) => {
          const [memory, cpu] = value.split(',').map(Number);
          return Object.freeze({ targetMemoryUsage: memory ?? 0, targetCpuUsage: cpu ?? 0 });
        })
        .optional(),
      '"memory,cpu" target fractions (e.g. 0.8,0.9): the SDK\'s resource-based tuner hands out task slots while the host stays under them, instead of fixed slot counts (not with WORKER_MAX_CONCURRENT_ACTIVITIES).',
      { defaultText: 'fixed slot counts' },
    ),
    WORKER_REUSE_V8_CONTEXT: doc(
      z.enum(['true', 'false'], { error: 'must be true or false' }).optional(),
      "`false` gives each workflow its own V8 context instead of one reused context: for comparisons, not production.",
      { defaultText: "the SDK's, true" },
    ),
    LOG_LEVEL: doc(z.enum(['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR']).default('INFO'), 'TRACE, DEBUG, INFO, WARN or ERROR; one JSON object per line.'),
    RETENTION_DAYS: doc(
      RetentionDays.default(new Map()),
      "Retention policy: forget a tenant's login N days after its last successful retrieval (schedule, card at the service, stored payloads, histories). <customerId>:<days>, comma-separated; *:<days> for every other tenant; days 1..36500. Applies from each login's next retrieval; removing a tenant's entry ends its logins' timers at their next retrieval.",
      { defaultText: 'off' },
    ),
  }),
  'Worker',
  'The worker process (`npm run worker`, the image\'s CMD): its endpoints, Worker Deployment Versioning, tuning and policies.',
);

const WorkerVariables = z
  // Loose: Temporal's environment configuration reads variables of its own (withTemporalEnvConfig).
  .looseObject({
    ...TemporalVars.shape,
    ...TemporalEnvConfigVars.shape,
    ...AggregatorVars.shape,
    ...WorkerVars.shape,
    ...PriorityVars.shape,
    ...BudgetVars.shape,
    ...EncryptionVars.shape,
    ...PayloadStoreVars.shape,
    ...TracingVars.shape,
  });

const WorkerEnv = WorkerVariables.transform(withTemporalEnvConfig)
  .superRefine((env, ctx) => {
    checkTls(env, ctx);
    checkPayloads(env, ctx);
    for (const slots of ['WORKER_MAX_CONCURRENT_ACTIVITIES', 'WORKER_MAX_CONCURRENT_WORKFLOW_TASKS'] as const) {
      if (env.WORKER_RESOURCE_TUNER && env[slots] !== undefined) ctx.addIssue({ code: 'custom', path: [slots], message: 'cannot be set with WORKER_RESOURCE_TUNER (the tuner sizes the task slots)' });
    }
  })
  .transform((env, ctx) =>
    Object.freeze({
      temporal: temporalSection(env),
      aggregator: Object.freeze({
        baseUrl: env.AGGREGATOR_BASE_URL,
        /** The CLI's default tenant; the worker serves whichever tenant a connection names. */
        customerId: env.AGGREGATOR_CUSTOMER_ID,
        timeoutMs: env.AGGREGATOR_TIMEOUT_MS,
        /** The calling application's credential header: none without AGGREGATOR_AUTH_SECRET. */
        ...(env.AGGREGATOR_AUTH_SECRET ? { auth: Object.freeze({ header: env.AGGREGATOR_AUTH_HEADER, value: env.AGGREGATOR_AUTH_SECRET }) } : {}),
      }),
      /** Prometheus at http://host:port/metrics; port 0 turns it off. */
      metrics: Object.freeze({ host: env.WORKER_METRICS_HOST, port: env.WORKER_METRICS_PORT }),
      /** Running connections counted by status every intervalMs for aggregation_connections; 0: off. */
      statusGauge: Object.freeze({ intervalMs: env.WORKER_STATUS_GAUGE_INTERVAL_S * 1000 }),
      /** Liveness for container health checks at http://host:port/healthz; port 0 turns it off. */
      health: Object.freeze({ host: env.WORKER_HEALTH_HOST, port: env.WORKER_HEALTH_PORT }),
      workflows: Object.freeze({
        /** A prebuilt bundle (production); unset, the worker bundles the workflows at start. */
        bundlePath: env.WORKER_WORKFLOW_BUNDLE,
        maxCachedWorkflows: env.WORKER_MAX_CACHED_WORKFLOWS,
        threads: env.WORKER_WORKFLOW_THREADS,
        pollers: env.WORKER_WORKFLOW_POLLERS,
        stickyTimeoutMs: env.WORKER_STICKY_TIMEOUT_MS ?? DEFAULT_STICKY_TIMEOUT_MS,
        maxConcurrentTasks: env.WORKER_RESOURCE_TUNER ? undefined : (env.WORKER_MAX_CONCURRENT_WORKFLOW_TASKS ?? DEFAULT_WORKFLOW_TASK_SLOTS),
        reuseV8Context: env.WORKER_REUSE_V8_CONTEXT === undefined ? undefined : env.WORKER_REUSE_V8_CONTEXT === 'true',
      }),
      /** Worker Deployment Versioning: connections are pinned to the build they started on. */
      deployment: Object.freeze({ ...deploymentSection(env, env.TEMPORAL_TASK_QUEUE, ctx), buildId: env.WORKER_BUILD_ID, becomeCurrent: env.WORKER_BECOME_CURRENT }),
      activities: Object.freeze({ maxConcurrent: env.WORKER_MAX_CONCURRENT_ACTIVITIES }),
      /** Resource-based slot tuning (memory and CPU target fractions); fixed slot counts unless set. */
      resourceTuner: env.WORKER_RESOURCE_TUNER,
      logLevel: env.LOG_LEVEL,
      /** Days a tenant keeps a login after its last retrieval, by customer id ('*': any other); empty: off. */
      retentionDays: env.RETENTION_DAYS,
      /** Priority of the retention timers and forgets the worker starts, and the tenants' weights. */
      priority: prioritySection(env),
      /** The fleet's request budget toward the service, applied as Temporal task-queue limits at start; undefined: none. */
      budget: budgetSection(env, ctx),
      ...payloadSections(env, ctx),
      ...tracingSection(env, 'aggregation-connections-worker'),
    }),
  );

export type WorkerConfig = z.output<typeof WorkerEnv>;

/** What the pipeline client and the CLI need to reach the connections. */
const ClientVariables = z.looseObject({
  ...TemporalVars.shape,
  ...TemporalEnvConfigVars.shape,
  AGGREGATOR_CUSTOMER_ID: CustomerId,
  ...DeploymentVars.shape,
  ...PriorityVars.shape,
  ...BudgetVars.shape,
  ...BookVars.shape,
  ...EncryptionVars.shape,
  ...PayloadStoreVars.shape,
  ...TracingVars.shape,
});

const ClientEnv = ClientVariables.transform(withTemporalEnvConfig)
  .superRefine((env, ctx) => {
    checkTls(env, ctx);
    checkPayloads(env, ctx);
  })
  .transform((env, ctx) =>
    Object.freeze({
      temporal: temporalSection(env),
      /** The tenant (lender) that new connections belong to unless told otherwise. */
      customerId: env.AGGREGATOR_CUSTOMER_ID,
      /** The worker deployment whose versions `deployment` commands show and route. */
      deployment: deploymentSection(env, env.TEMPORAL_TASK_QUEUE, ctx),
      /** The priority each connection starts with, by who waits, and the tenants' fairness weights. */
      priority: prioritySection(env),
      /** The fleet's configured request budget (what `budget show` compares with the queue's). */
      budget: budgetSection(env, ctx),
      /** The window and page size of book refreshes that name none. */
      books: bookSection(env, ctx),
      ...payloadSections(env, ctx),
      ...tracingSection(env, 'aggregation-connections-client'),
    }),
  );

export type ClientConfig = z.output<typeof ClientEnv>;

const CliVars = group(
  z.object({
    CONNECTION_PASSWORD: doc(z.string().optional(), '`npm run cli -- start` reads a live password here when --password-stdin is not given (never from a flag).', { secret: true }),
  }),
  'CLI',
  'The operator CLI (`npm run cli`) reaches Temporal with the client settings above; this is its own.',
);

const CONSOLE_TOKEN_RULE = 'at least 16 characters, e.g. `openssl rand -hex 24`';
const ConsoleVars = group(
  z.object({
    CONSOLE_HOST: doc(NonEmpty.default('127.0.0.1'), 'The address the console listens on: 127.0.0.1 unless it sits behind a proxy (0.0.0.0 in a container).'),
    CONSOLE_PORT: ConsolePort,
    CONSOLE_TOKEN: doc(
      z.string({ message: 'is required: set CONSOLE_TOKEN to a long random secret (e.g. `openssl rand -hex 24`)' }).min(16, { message: 'must be at least 16 characters' }),
      `The operators' bearer token, required: ${CONSOLE_TOKEN_RULE}.`,
      { secret: true },
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
const ConsoleVariables = z.looseObject({
  ...ConsoleVars.shape,
  /** Where the histories the console decodes live (ours, else the Temporal profile's): decides whether a generated local key may be used. */
  TEMPORAL_ADDRESS: TemporalVars.shape.TEMPORAL_ADDRESS,
  ...TemporalEnvConfigVars.shape,
  ...EncryptionVars.shape,
  ...PayloadStoreVars.shape,
});

const ConsoleEnv = ConsoleVariables.transform(withTemporalEnvConfig)
  .superRefine(checkPayloads)
  .transform((env, ctx) =>
    Object.freeze({
      port: env.CONSOLE_PORT,
      host: env.CONSOLE_HOST,
      token: env.CONSOLE_TOKEN,
      /** Origins allowed to call the codec endpoint cross-origin, with credentials. */
      codecCorsOrigins: Object.freeze(env.CONSOLE_CODEC_CORS_ORIGINS),
      ...payloadSections(env, ctx),
    }),
  );

export type ConsoleConfig = z.output<typeof ConsoleEnv>;

const SandboxVars = group(
  z.object({
    SANDBOX_HOST: doc(NonEmpty.default('127.0.0.1'), 'The address the sandbox listens on.'),
    SANDBOX_PORT: SandboxPort,
    SANDBOX_AUTH_SECRET: doc(z.string().min(1).optional(), 'When set, /v3 requests must carry it in the x-api-key header (else 401 ACCESS_DENIED).', { secret: true }),
    SANDBOX_RATE_LIMIT_PER_SECOND: doc(
      z.coerce.number().int().min(1).max(1_000_000).optional(),
      'Requests a second the sandbox takes from each tenant before it answers 429 TOO_MANY_REQUESTS with Retry-After (src/sandbox/rate-limits.ts); POST /sandbox/rate-limits changes it per tenant at run time.',
      { defaultText: 'unlimited' },
    ),
  }),
  'Sandbox',
  'The sandbox of the aggregation service (`npm run sandbox`, and inside `npm start`).',
);

const SandboxEnv = SandboxVars.transform((env) =>
  Object.freeze({
    port: env.SANDBOX_PORT,
    host: env.SANDBOX_HOST,
    authSecret: env.SANDBOX_AUTH_SECRET,
    ...(env.SANDBOX_RATE_LIMIT_PER_SECOND === undefined ? {} : { rateLimitPerSecond: env.SANDBOX_RATE_LIMIT_PER_SECOND }),
  }),
);

export type SandboxConfig = z.output<typeof SandboxEnv>;

/** Where the processes of `npm start` listen. */
const DEV_STACK_HOST = '127.0.0.1';

/** The sandbox `npm start` runs on `port`: the dev stack starts it there, the demo looks for it there. */
function localSandboxUrl(port: number): string {
  return `http://${DEV_STACK_HOST}:${port}`;
}

const DevStackVars = group(
  z.object({
    TEMPORAL_PORT: doc(Port.default(7233), "The Temporal dev server's gRPC port."),
    TEMPORAL_UI_PORT: doc(Port.default(8233), "The Temporal Web UI's port."),
  }),
  'Dev stack (`npm start`)',
  "The whole stack on 127.0.0.1: Temporal, its Web UI, the sandbox (SANDBOX_PORT), the worker (WORKER_METRICS_PORT; WORKER_BECOME_CURRENT yes unless set) and the console (CONSOLE_PORT; a CONSOLE_TOKEN generated unless set). Every other variable reaches the worker and the console as they are; TEMPORAL_ADDRESS and AGGREGATOR_BASE_URL are the stack's.",
);

/** `npm start`: the ports of the whole stack on 127.0.0.1, each process's own default, and what it gives its worker and console. */
const DevStackEnv = z
  .object({
    ...DevStackVars.shape,
    SANDBOX_PORT: SandboxPort,
    CONSOLE_PORT: ConsolePort,
    WORKER_METRICS_PORT: WorkerMetricsPort,
    WORKER_BECOME_CURRENT: doc(
      WorkerVars.shape.WORKER_BECOME_CURRENT.unwrap().default('yes'),
      "`npm start` gives its worker `yes` unless set: the only build on this machine, new connections start on it even when the persisted history made an older build current.",
    ),
    CONSOLE_TOKEN: doc(ConsoleVars.shape.CONSOLE_TOKEN.optional(), '`npm start` generates one for the run unless set, and prints the console\'s URL with it.', {
      defaultText: 'generated',
      secret: true,
    }),
    CONSOLE_CODEC_CORS_ORIGINS: doc(ConsoleVars.shape.CONSOLE_CODEC_CORS_ORIGINS.unwrap().optional(), "`npm start` lets its own Web UI call the console's codec endpoint unless set.", {
      defaultText: 'http://127.0.0.1:TEMPORAL_UI_PORT,http://localhost:TEMPORAL_UI_PORT',
    }),
  })
  .transform((env) =>
    Object.freeze({
      ports: Object.freeze({
        temporal: env.TEMPORAL_PORT,
        ui: env.TEMPORAL_UI_PORT,
        sandbox: env.SANDBOX_PORT,
        console: env.CONSOLE_PORT,
        /** 0: no metrics endpoint. */
        workerMetrics: env.WORKER_METRICS_PORT,
      }),
      host: DEV_STACK_HOST,
      sandboxUrl: localSandboxUrl(env.SANDBOX_PORT),
      workerBecomeCurrent: env.WORKER_BECOME_CURRENT,
      /** Undefined: the stack generates one. */
      consoleToken: env.CONSOLE_TOKEN,
      /** Undefined: the stack's own Web UI. */
      consoleCodecCorsOrigins: env.CONSOLE_CODEC_CORS_ORIGINS,
    }),
  );

export type DevStackConfig = z.output<typeof DevStackEnv>;

const SandboxUrl = doc(
  z.url({ protocol: /^https?$/, message: 'must be an http(s) URL such as http://127.0.0.1:4010' }).optional(),
  'A running sandbox to use instead of the local one.',
  { defaultText: 'http://127.0.0.1:SANDBOX_PORT (`npm run demo`), an in-process sandbox (bench/sandbox-throughput.ts)' },
);

const DemoVars = group(
  z.object({
    SANDBOX_URL: SandboxUrl,
    DEMO_SCENARIO: doc(NonEmpty.default('two_step_code'), 'The live connection\'s scenario: any challenge username of GET /sandbox/scenarios.'),
  }),
  'Demo (`npm run demo`)',
  'The demo runs against `npm start`: it reaches Temporal with the client settings and finds the sandbox as the dev stack starts it (SANDBOX_PORT), unless SANDBOX_URL names another.',
);

const DemoEnv = z.object({ ...DemoVars.shape, SANDBOX_PORT: SandboxPort }).transform((env) =>
  Object.freeze({
    /** SANDBOX_URL, else the sandbox `npm start` runs on SANDBOX_PORT. */
    sandboxUrl: (env.SANDBOX_URL ?? localSandboxUrl(env.SANDBOX_PORT)).replace(/\/+$/, ''),
    scenario: env.DEMO_SCENARIO,
  }),
);

export type DemoConfig = z.output<typeof DemoEnv>;

// ---- tooling: the scripts, benchmarks and tests around the product ------------------------------

const RELEASE_RULE = { message: 'must be a release such as 1.32.2' };
const Release = z.string().trim().regex(/^\d+\.\d+\.\d+$/, RELEASE_RULE);
const ExistingPath = z.string().trim().min(1, { message: 'must not be empty' });
const VERSIONS_FILE = 'scripts/lib/temporal-versions.env';
const PROVISION_SCRIPT = 'scripts/provision-temporal.sh';

const ToolchainVars = group(
  z.object({
    TEMPORAL_CACHE_DIR: doc(ExistingPath.optional(), 'Where the Temporal binaries (and MinIO, Compose, Node.js releases) are built or fetched and cached; CI keeps it outside the clone.', {
      defaultText: '.temporal/ in the project',
    }),
    TEMPORAL_SERVER_VERSION: doc(Release.optional(), 'The Temporal server release of the dev server (npm start, npm test), prod:check, chaos on PostgreSQL and temporal-compose.yml.', {
      defaultFrom: VERSIONS_FILE,
    }),
    TEMPORAL_UPGRADE_PATH: doc(
      z
        .string()
        .trim()
        .regex(/^\d+\.\d+\.\d+(\s+\d+\.\d+\.\d+)*$/, { message: 'must be releases separated by spaces, oldest first, e.g. 1.29.1 1.30.9' })
        .transform((text) => Object.freeze(text.split(/\s+/)))
        .optional(),
      'The releases `npm run prod:upgrade` takes a database through, oldest first, ending at TEMPORAL_SERVER_VERSION.',
      { defaultFrom: VERSIONS_FILE },
    ),
    TEMPORAL_UI_VERSION: doc(Release.optional(), 'The Web UI server release beside the dev server.', { defaultFrom: VERSIONS_FILE }),
    TEMPORAL_SERVER_PATH: doc(ExistingPath.optional(), 'An existing Temporal server binary instead of the cached build (of TEMPORAL_SERVER_VERSION only).'),
    TEMPORAL_SQL_TOOL_PATH: doc(ExistingPath.optional(), 'An existing temporal-sql-tool for prod:check (of TEMPORAL_SERVER_VERSION only).'),
    TEMPORAL_SCHEMA_DIR: doc(ExistingPath.optional(), "The server's PostgreSQL schema directory (.../schema/postgresql/v12) for prod:check (of TEMPORAL_SERVER_VERSION only).", {
      defaultText: "the server module's, in the Go module cache",
    }),
    TEMPORAL_UI_SERVER_PATH: doc(ExistingPath.optional(), 'An existing Web UI server binary instead of the cached build.'),
    TEMPORAL_CLI_PATH: doc(ExistingPath.optional(), 'An existing `temporal` CLI (operator commands; no longer the dev server: scripts/lib/dev-server.ts).', {
      defaultText: 'the cached build, else `temporal` on PATH',
    }),
    TEMPORAL_TEST_SERVER_PATH: doc(ExistingPath.optional(), "An existing sdk-java time-skipping test server instead of the cached one."),
    MINIO_PATH: doc(ExistingPath.optional(), 'An existing MinIO server (the S3 server of the payload-store tests) instead of the cached build.'),
    DOCKER_COMPOSE_PATH: doc(
      ExistingPath.optional(),
      'An existing Docker Compose v2 (docker-compose), only to validate temporal-compose.yml (`npm run compose:check`, test/compose/; no Docker engine needed).',
      { defaultText: 'the cached build, else docker-compose on PATH' },
    ),
    PROD_CHECK_PG_BINDIR: doc(
      ExistingPath.optional(),
      'A PostgreSQL bin directory holding initdb and pg_ctl, for prod:check, prod:upgrade, chaos on PostgreSQL, deploy:check and bench:burst.',
      { defaultText: 'the newest /usr/lib/postgresql/<major>/bin' },
    ),
    GOMODCACHE: doc(ExistingPath.optional(), "Go's module cache, where prod:check finds the server's PostgreSQL schema.", { defaultText: '`go env GOMODCACHE`, else ~/go/pkg/mod' }),
  }),
  'Temporal binaries and other tools',
  "Where the scripts, the tests and the benchmarks find the Temporal server, its Web UI, the CLI, the test server, MinIO, Docker Compose and PostgreSQL. `npm run provision` (scripts/provision-temporal.sh) builds or fetches them into the cache; the *_PATH variables point at existing binaries instead.",
);

const ProvisioningVars = group(
  z.object({
    TEMPORAL_CLI_VERSION: doc(Release.optional(), 'The `temporal` CLI release provisioning builds.', { defaultFrom: PROVISION_SCRIPT }),
    TEMPORAL_TEST_SERVER_VERSION: doc(Release.optional(), 'The sdk-java time-skipping test server release provisioning fetches.', { defaultFrom: PROVISION_SCRIPT }),
    MINIO_VERSION: doc(z.string().optional(), 'The MinIO Go module version provisioning builds.', { defaultFrom: PROVISION_SCRIPT }),
    DOCKER_COMPOSE_VERSION: doc(z.string().optional(), 'The Docker Compose v2 Go module version provisioning builds.', { defaultFrom: PROVISION_SCRIPT }),
  }),
  'Provisioning',
  'Releases only scripts/provision-temporal.sh reads (with TEMPORAL_CACHE_DIR, the versions and the *_PATH variables above).',
);

/** Overrides only: the callers fall back on the cache in the project and the releases scripts/lib/temporal-versions.env declares. */
const ToolchainEnv = ToolchainVars.transform((env) =>
  Object.freeze({
    cacheDir: env.TEMPORAL_CACHE_DIR,
    versions: Object.freeze({ server: env.TEMPORAL_SERVER_VERSION, upgradePath: env.TEMPORAL_UPGRADE_PATH, ui: env.TEMPORAL_UI_VERSION }),
    paths: Object.freeze({
      server: env.TEMPORAL_SERVER_PATH,
      sqlTool: env.TEMPORAL_SQL_TOOL_PATH,
      schemaDir: env.TEMPORAL_SCHEMA_DIR,
      uiServer: env.TEMPORAL_UI_SERVER_PATH,
      cli: env.TEMPORAL_CLI_PATH,
      testServer: env.TEMPORAL_TEST_SERVER_PATH,
      minio: env.MINIO_PATH,
      dockerCompose: env.DOCKER_COMPOSE_PATH,
      postgresBinDir: env.PROD_CHECK_PG_BINDIR,
      goModCache: env.GOMODCACHE,
    }),
  }),
);

export type ToolchainConfig = z.output<typeof ToolchainEnv>;

const CountAtLeast = (min: number) => z.coerce.number().int({ message: `must be a whole number, at least ${min}` }).min(min, { message: `must be a whole number, at least ${min}` });
const TEST_LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'] as const;
const TestAddress = doc(
  HostPort.optional(),
  'The Temporal dev server `npm test` shares with its test files, image:check and the closing replay (scripts/run-tests.mjs sets it).',
  { defaultText: 'each test starts a private dev server' },
);
const WorkerRegistryDir = doc(
  ExistingPath.optional(),
  'The private directory where the test helpers register the workers they start, with their payload keys, for the replay at the end of `npm test` (scripts/run-tests.mjs sets it; scripts/lib/suite-registry.ts).',
  { defaultText: 'no registry: registering does nothing' },
);
const ReplayMinHistories = doc(CountAtLeast(0).optional(), 'The replay at the end of `npm test` fails when it replayed fewer histories than this.', {
  defaultText: '50 for the whole suite, else 0',
});

const TestVars = group(
  z.object({
    TEMPORAL_TEST_ADDRESS: TestAddress,
    TEST_WORKER_REGISTRY_DIR: WorkerRegistryDir,
    TEMPORAL_TEST_LOG_LEVEL: doc(
      z
        .string()
        .transform((text) => text.trim().toUpperCase())
        .pipe(z.enum(TEST_LOG_LEVELS, { error: `must be one of ${TEST_LOG_LEVELS.join(', ')}` }))
        .default('ERROR'),
      "The Temporal runtime's log level in test processes (worker logs, bundling, expected workflow failures).",
    ),
    RECORD_HISTORIES: doc(Bool.default(false), 'true or 1: the tests that record replay fixtures write them again (e.g. `RECORD_HISTORIES=1 node scripts/run-tests.mjs workflows/connection.test`).'),
    CHROMIUM_PATH: doc(ExistingPath.default('/usr/bin/chromium'), 'The Chromium the browser tests drive (the console and the Web UI codec).'),
    DOCS_SCREENSHOTS: doc(
      Bool.default(false),
      'true or 1 (`npm run docs:screenshots` sets it): the browser tests write their screenshots into docs/images/; otherwise into a temporary folder, checked and removed.',
    ),
    CI: doc(
      z.string().transform((text) => text !== 'false' && text !== '0').default(false),
      'Set by CI: a missing prerequisite (PostgreSQL, the server binaries) fails the prod:check, deploy:check and bench:burst tests instead of skipping them.',
      { defaultText: 'unset: skip' },
    ),
    TEST_CONCURRENCY: doc(CountAtLeast(1).optional(), 'How many test files `npm test` runs at once.', { defaultText: 'half the cores, at least 1' }),
    TEST_FILE_TIMEOUT_S: doc(
      CountAtLeast(1).default(1200),
      'Seconds one test file may run in `npm test` (its process, open handles included) before the runner kills it and fails it by name; each test inside also fails after 5 minutes.',
    ),
    REPLAY_MIN_HISTORIES: ReplayMinHistories,
    REPLAY_VERBOSE: doc(Bool.default(false), "true or 1: the closing replay lists every skipped history, not only the counts."),
  }),
  'Tests and tooling',
  '`npm test` (scripts/run-tests.mjs), the test files and their helpers, and the replay of the suite\'s histories that closes the run (scripts/replay-suite.ts).',
  { envExample: false },
);

/** The test files and their helpers (and image:check, which shares npm test's server). */
const TestEnv = z
  .object({ TEMPORAL_TEST_ADDRESS: TestAddress, TEST_WORKER_REGISTRY_DIR: WorkerRegistryDir, TEMPORAL_TEST_LOG_LEVEL: TestVars.shape.TEMPORAL_TEST_LOG_LEVEL, RECORD_HISTORIES: TestVars.shape.RECORD_HISTORIES, CHROMIUM_PATH: TestVars.shape.CHROMIUM_PATH, DOCS_SCREENSHOTS: TestVars.shape.DOCS_SCREENSHOTS, CI: TestVars.shape.CI })
  .transform((env) =>
    Object.freeze({
      /** undefined: start a private dev server. */
      temporalAddress: env.TEMPORAL_TEST_ADDRESS,
      workerRegistryDir: env.TEST_WORKER_REGISTRY_DIR,
      logLevel: env.TEMPORAL_TEST_LOG_LEVEL,
      recordHistories: env.RECORD_HISTORIES,
      chromiumPath: env.CHROMIUM_PATH,
      docsScreenshots: env.DOCS_SCREENSHOTS,
      ci: env.CI,
    }),
  );

export type TestConfig = z.output<typeof TestEnv>;

/** scripts/run-tests.mjs. */
const TestRunEnv = z
  .object({ TEST_CONCURRENCY: TestVars.shape.TEST_CONCURRENCY, TEST_FILE_TIMEOUT_S: TestVars.shape.TEST_FILE_TIMEOUT_S, REPLAY_MIN_HISTORIES: ReplayMinHistories })
  .transform((env) => Object.freeze({ concurrency: env.TEST_CONCURRENCY, fileTimeoutMs: env.TEST_FILE_TIMEOUT_S * 1000, replayMinHistories: env.REPLAY_MIN_HISTORIES }));

/** scripts/replay-suite.ts: run by scripts/run-tests.mjs, which gives it the shared server. */
const ReplayEnv = z
  .object({
    TEMPORAL_TEST_ADDRESS: doc(
      z.string({ message: 'is not set (scripts/run-tests.mjs sets it)' }).pipe(HostPort),
      'The shared dev server whose histories the replay reads.',
    ),
    TEST_WORKER_REGISTRY_DIR: WorkerRegistryDir,
    REPLAY_MIN_HISTORIES: ReplayMinHistories,
    REPLAY_VERBOSE: TestVars.shape.REPLAY_VERBOSE,
  })
  .transform((env) =>
    Object.freeze({ temporalAddress: env.TEMPORAL_TEST_ADDRESS, workerRegistryDir: env.TEST_WORKER_REGISTRY_DIR, minHistories: env.REPLAY_MIN_HISTORIES ?? 0, verbose: env.REPLAY_VERBOSE }),
  );

const DYNAMIC_CONFIG_RULE = 'must be `none` or space-separated key=value pairs, values as JSON (e.g. system.enableActivityEagerExecution=false)';
/** `key=value ...` (values as JSON) → the dev server's dynamic config; `none` → none at all. */
const DynamicConfig = z.string().transform((text, ctx) => {
  if (text.trim() === 'none') return Object.freeze({});
  const config: Record<string, boolean | number | string> = {};
  for (const pair of text.split(' ').filter(Boolean)) {
    const equals = pair.indexOf('=');
    let value: unknown;
    try {
      value = equals > 0 ? JSON.parse(pair.slice(equals + 1)) : undefined;
    } catch {
      value = undefined;
    }
    if (typeof value !== 'boolean' && typeof value !== 'number' && typeof value !== 'string') {
      ctx.addIssue({ code: 'custom', message: `${JSON.stringify(pair)}: ${DYNAMIC_CONFIG_RULE}` });
      continue;
    }
    config[pair.slice(0, equals)] = value;
  }
  return Object.freeze(config);
});

const BenchVars = group(
  z.object({
    BENCH_WORKER_RUNTIME: doc(
      z.enum(['compiled', 'tsx'], { error: 'must be compiled or tsx' }).default('compiled'),
      'How the worker benchmarks run the worker: `compiled` as the image does (`npm run build`, node dist/src/worker.js), `tsx` from the sources as `npm run worker` does.',
    ),
    BENCH_WORKER_NODE_ARGS: doc(
      z.string().transform((text) => Object.freeze(text.split(' ').filter(Boolean))).optional(),
      'Extra node arguments for the benchmarked worker only, space-separated, e.g. --max-old-space-size=256 or --cpu-prof --cpu-prof-dir=/tmp/prof.',
    ),
    BENCH_SERVER_DYNAMIC_CONFIG: doc(
      DynamicConfig.optional(),
      "The benchmark dev server's dynamic config instead of the product's (scripts/lib/server-dynamic-config.ts), to compare: key=value pairs, space-separated, values as JSON; `none` for none at all (e.g. no eager activities).",
      { defaultText: "the product's" },
    ),
    VM_WATCHDOG: doc(
      z.enum(['on', 'off']).optional(),
      'Experiment only, with NODE_OPTIONS="--require ./bench/vm-watchdog-probe.cjs": `off` drops the SDK\'s isolate execution timeout (no watchdog thread per call into the workflow sandbox).',
      { defaultText: 'on' },
    ),
    VM_PROBE_OUT: doc(z.string().optional(), 'Experiment only: where bench/vm-watchdog-probe.cjs writes its count of calls into the workflow sandbox (<path>.<threadId>, every second).'),
    SDK_FLOOR_WORKFLOWS_PATH: doc(z.string().optional(), "Set by bench/sdk-floor.ts for the floor's worker, which runs from a compiled copy elsewhere: the floor's workflows to bundle.", {
      defaultText: 'bench/sdk-floor/workflows.ts beside the worker',
    }),
  }),
  'Benchmarks',
  "The benchmarks (bench/). They pass this shell's WORKER_* settings, NODE_OPTIONS, MALLOC_ARENA_MAX and VM_* on to the worker they start, to compare tunings.",
  { envExample: false },
);

const BenchEnv = z
  .object({
    BENCH_WORKER_RUNTIME: BenchVars.shape.BENCH_WORKER_RUNTIME,
    BENCH_WORKER_NODE_ARGS: BenchVars.shape.BENCH_WORKER_NODE_ARGS,
    BENCH_SERVER_DYNAMIC_CONFIG: BenchVars.shape.BENCH_SERVER_DYNAMIC_CONFIG,
    SANDBOX_URL: SandboxUrl,
  })
  .transform((env) =>
    Object.freeze({
      workerRuntime: env.BENCH_WORKER_RUNTIME,
      workerNodeArgs: env.BENCH_WORKER_NODE_ARGS ?? Object.freeze([]),
      /** undefined: the product's. */
      serverDynamicConfig: env.BENCH_SERVER_DYNAMIC_CONFIG,
      /** undefined: an in-process sandbox (bench/sandbox-throughput.ts). */
      sandboxUrl: env.SANDBOX_URL,
    }),
  );

export type BenchConfig = z.output<typeof BenchEnv>;

const RuntimeVars = group(
  z.object({
    ALLOW_UNSUPPORTED_NODE: doc(
      z.literal('true', { error: (issue) => `expected true or unset, got ${JSON.stringify(issue.input)}` }).optional(),
      'true: run on an unsupported (end-of-life) Node.js anyway. Only bench/runtimes.ts sets it, to measure the product on the runtime it replaced; never in production.',
    ),
  }),
  'Runtime (every process)',
  'Every process that loads its settings from src/config.ts refuses a Node.js older than the major .nvmrc pins, naming the runtime.',
);

// ---- the reference: groups and readers ---------------------------------------------------------

/** The sections of the reference, in order; every variable a reader reads belongs to the first group that has it. */
export const CONFIG_GROUPS: readonly z.ZodObject[] = [
  RuntimeVars,
  TemporalVars,
  TemporalEnvConfigVars,
  AggregatorVars,
  WorkerVars,
  PriorityVars,
  BudgetVars,
  BookVars,
  ConsoleVars,
  EncryptionVars,
  PayloadStoreVars,
  TracingVars,
  CliVars,
  SandboxVars,
  DevStackVars,
  DemoVars,
  ToolchainVars,
  ProvisioningVars,
  BenchVars,
  TestVars,
];

/** The object of flat variables a process's schema starts from, before its transforms. */
function objectOf(schema: z.ZodType): z.ZodObject {
  let current: unknown = schema;
  while (!(current instanceof z.ZodObject)) {
    if (!(current instanceof z.ZodPipe)) throw new TypeError('a process schema is an object of variables, then transforms');
    current = current.in;
  }
  return current;
}

/** Who reads which variables: the reference's "read by". */
export interface ConfigReader {
  /** Its name in the "read by" column. */
  readonly name: string;
  /** The programs that read them this way. */
  readonly programs: string;
  /** Its loader in this file; absent: a program that cannot load this file, which reads them itself. */
  readonly loader?: string;
  /** Why a program without a loader reads the environment itself. */
  readonly reason?: string;
  readonly variables: readonly z.ZodObject[];
}

const pick = <S extends z.ZodObject, K extends keyof S['shape'] & string>(schema: S, ...names: K[]) => z.object(Object.fromEntries(names.map((name) => [name, schema.shape[name]])));

export const CONFIG_READERS: readonly ConfigReader[] = [
  { name: 'worker', loader: 'loadWorkerConfig', programs: "`npm run worker` (src/worker.ts), the image's CMD, `npm start`'s worker", variables: [RuntimeVars, WorkerVariables] },
  {
    name: 'client',
    loader: 'loadClientConfig',
    programs: 'the pipeline client (`ConnectionsClient.connect()`), `npm run cli`, `npm run demo`, the console (to reach Temporal), `npm start` (it checks what its children will read)',
    variables: [RuntimeVars, ClientVariables],
  },
  { name: 'CLI', loader: 'connectionPasswordFromEnv', programs: '`npm run cli -- start`', variables: [RuntimeVars, CliVars] },
  { name: 'console', loader: 'loadConsoleConfig', programs: '`npm run console` (src/client/console/server.ts), `npm start`\'s console', variables: [RuntimeVars, ConsoleVariables] },
  { name: 'sandbox', loader: 'loadSandboxConfig', programs: '`npm run sandbox` (src/sandbox/main.ts)', variables: [RuntimeVars, SandboxVars] },
  { name: 'dev stack', loader: 'loadDevStackConfig', programs: '`npm start` (scripts/dev-stack.ts)', variables: [RuntimeVars, objectOf(DevStackEnv)] },
  { name: 'demo', loader: 'loadDemoConfig', programs: '`npm run demo` (scripts/demo.ts)', variables: [RuntimeVars, objectOf(DemoEnv)] },
  {
    name: 'tools',
    loader: 'loadToolchainConfig',
    programs: 'scripts/lib/temporal-binaries.ts, temporal-versions.ts, minio-binary.ts, compose-check.ts, prod-check/: npm start, npm test, the test helpers, prod:check, chaos, deploy:check, compose:check, the benchmarks',
    variables: [RuntimeVars, ToolchainVars],
  },
  {
    name: 'provisioning',
    programs: '`npm run provision` (scripts/provision-temporal.sh), run before `npm start` and `npm test`; scripts/provision-node.sh',
    reason: 'bash scripts that run before Node.js is there (they provision it)',
    variables: [pick(ToolchainVars, 'TEMPORAL_CACHE_DIR', 'TEMPORAL_SERVER_VERSION', 'TEMPORAL_UPGRADE_PATH', 'TEMPORAL_UI_VERSION', 'TEMPORAL_CLI_PATH', 'MINIO_PATH', 'DOCKER_COMPOSE_PATH'), ProvisioningVars],
  },
  { name: 'bench', loader: 'loadBenchConfig', programs: 'the benchmarks (bench/*.ts)', variables: [RuntimeVars, objectOf(BenchEnv)] },
  {
    name: 'vm probe',
    programs: 'bench/vm-watchdog-probe.cjs, preloaded into a benchmarked worker with NODE_OPTIONS=--require',
    reason: 'CommonJS preloaded by `node --require` into every thread of the worker before any module of the product, so it cannot import src/config.ts',
    variables: [pick(BenchVars, 'VM_WATCHDOG', 'VM_PROBE_OUT')],
  },
  {
    name: 'sdk floor worker',
    programs: "bench/sdk-floor/worker.ts: Temporal's floor, the bare SDK worker bench/sdk-floor.ts starts",
    reason: "the SDK's floor carries none of the product's code: it runs transpiled alone under node_modules/.cache/sdk-floor, where src/config.ts is not there to import",
    variables: [pick(TemporalVars, 'TEMPORAL_ADDRESS', 'TEMPORAL_TASK_QUEUE'), pick(BenchVars, 'SDK_FLOOR_WORKFLOWS_PATH')],
  },
  { name: 'tests', loader: 'loadTestConfig', programs: 'the test files and their helpers (test/), image:check (the shared dev server)', variables: [RuntimeVars, objectOf(TestEnv)] },
  { name: 'test runner', loader: 'loadTestRunConfig', programs: '`npm test` (scripts/run-tests.mjs)', variables: [RuntimeVars, objectOf(TestRunEnv)] },
  { name: 'replay', loader: 'loadReplayConfig', programs: "the closing replay of `npm test` (scripts/replay-suite.ts)", variables: [RuntimeVars, objectOf(ReplayEnv)] },
];

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
  }
}

/** Empty strings count as unset, so `FOO=` in a .env file means "use the default". */
function withoutEmpty(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''));
}

function problemsOf(error: z.ZodError): string[] {
  return error.issues.map((issue) => `${issue.path.join('.') || 'environment'}: ${issue.message}`);
}

/** Every process loads its settings here first, so the runtime is checked with the environment (ALLOW_UNSUPPORTED_NODE). */
function checkNodeRuntime(env: Record<string, string>): void {
  const runtime = RuntimeVars.safeParse(env);
  if (!runtime.success) throw new ConfigError(problemsOf(runtime.error));
  const problem = nodeRuntimeProblem(process.versions.node);
  if (problem && runtime.data.ALLOW_UNSUPPORTED_NODE !== 'true') throw new ConfigError([problem]);
}

function parseEnv<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv): z.output<S> {
  const set = withoutEmpty(env);
  checkNodeRuntime(set);
  const parsed = schema.safeParse(set);
  if (!parsed.success) throw new ConfigError(problemsOf(parsed.error));
  return parsed.data;
}

export function loadWorkerConfig(env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  return parseEnv(WorkerEnv, env);
}

export function loadClientConfig(env: NodeJS.ProcessEnv = process.env): ClientConfig {
  return parseEnv(ClientEnv, env);
}

export function loadConsoleConfig(env: NodeJS.ProcessEnv = process.env): ConsoleConfig {
  return parseEnv(ConsoleEnv, env);
}

export function loadSandboxConfig(env: NodeJS.ProcessEnv = process.env): SandboxConfig {
  return parseEnv(SandboxEnv, env);
}

export function loadDevStackConfig(env: NodeJS.ProcessEnv = process.env): DevStackConfig {
  return parseEnv(DevStackEnv, env);
}

/** `npm run demo`: its sandbox and scenario (it reaches Temporal with loadClientConfig). */
export function loadDemoConfig(env: NodeJS.ProcessEnv = process.env): DemoConfig {
  return parseEnv(DemoEnv, env);
}

/** The CLI's `start` reads a live password from here when --password-stdin is not given (never from a flag). */
export function connectionPasswordFromEnv(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return parseEnv(CliVars, env).CONNECTION_PASSWORD;
}

/** Where the scripts, tests and benchmarks find the Temporal binaries and other tools: the overrides set. */
export function loadToolchainConfig(env: NodeJS.ProcessEnv = process.env): ToolchainConfig {
  return parseEnv(ToolchainEnv, env);
}

/** The settings of the test files and their helpers. */
export function loadTestConfig(env: NodeJS.ProcessEnv = process.env): TestConfig {
  return parseEnv(TestEnv, env);
}

/** scripts/run-tests.mjs: how many files at once, and the closing replay's minimum if given. */
export function loadTestRunConfig(env: NodeJS.ProcessEnv = process.env): z.output<typeof TestRunEnv> {
  return parseEnv(TestRunEnv, env);
}

/** scripts/replay-suite.ts. */
export function loadReplayConfig(env: NodeJS.ProcessEnv = process.env): z.output<typeof ReplayEnv> {
  return parseEnv(ReplayEnv, env);
}

/** A script's settings: `load()`, or, on a bad value, its problems on stderr after `name: ` and exit code 2. */
export function settingsOrExit<T>(name: string, load: () => T): T {
  try {
    return load();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${name}: ${error.problems.join('; ')}\n`);
    process.exit(2);
  }
}

/** The benchmarks' own settings (the processes they start read theirs). */
export function loadBenchConfig(env: NodeJS.ProcessEnv = process.env): BenchConfig {
  return parseEnv(BenchEnv, env);
}

/**
 * The only reader of process.env: the settings of each process (worker, pipeline client and CLI,
 * operator console, sandbox, the dev stack of `npm start`), zod-parsed once and frozen. A bad or
 * missing value stops start-up with a message naming each offending VARIABLE.
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
 *   worker    { temporal, aggregator: { baseUrl, customerId, auth?, timeoutMs }, metrics: { host, port (0 = off) },
 *               workflows: { bundlePath?, maxCachedWorkflows?, threads?, pollers?, reuseV8Context? },
 *               deployment: { name, buildId?, becomeCurrent }, activities: { maxConcurrent? }, logLevel, encryption?, payloadStore }
 *   client    { temporal, customerId, deployment: { name }, encryption?, payloadStore }   (pipeline client and CLI)
 *   console   { port, host, token, codecCorsOrigins, encryption?, payloadStore }   (it reaches Temporal with the client's)
 *   sandbox   { port, host, authSecret?, rateLimitPerSecond? }
 *   dev stack { ports: { temporal, ui, sandbox, console, workerMetrics }, host, sandboxUrl }
 *   demo      { sandboxUrl, scenario }   (it reaches Temporal with the client's)
 */
import { readFileSync } from 'node:fs';
import { platform } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { loadClientConfig as loadTemporalConfigFile, loadClientConfigProfile, type ClientConfigProfile, type ConfigDataSource } from '@temporalio/envconfig';
import { z } from 'zod';
import type { EncryptionKeys } from './codec/encryption-codec.js';
import { LocalKeyFileError, readOrCreateLocalKey } from './local-key.js';
import { DEFAULT_PRIORITY_KEYS, FAIRNESS_WEIGHT_LIMITS, PRIORITY_KEY_LIMITS, type PriorityPolicy } from './contract/priority.js';
import { nodeRuntimeProblem } from './node-runtime.js';
import { DEFAULT_PAYLOAD_SIZE_THRESHOLD_BYTES, HISTORY_PAYLOAD_LIMIT_BYTES, type PayloadStoreSettings } from './payload-store/settings.js';

const PORT_RULE = { message: 'must be a port number, 0 to 65535' };
const Port = z.coerce.number(PORT_RULE).int(PORT_RULE).min(0, PORT_RULE).max(65_535, PORT_RULE);
const Bool = z.enum(['true', 'false', '1', '0']).transform((value) => value === 'true' || value === '1');

// Ports read both by their process and by the dev stack, which must agree on the defaults.
const SandboxPort = Port.default(4010);
const ConsolePort = Port.default(8080);
/** 0 turns the worker's metrics endpoint off. */
const WorkerMetricsPort = Port.default(9464);

// ---- Temporal: how the worker, pipeline client and CLI reach it --------------------------------

/**
 * Unset, the address, namespace, API key, TLS switch and server name come from Temporal's environment
 * configuration when it has them (temporalEnvConfig below), else from these defaults.
 */
const TEMPORAL_DEFAULTS = { address: 'localhost:7233', namespace: 'default' } as const;
const HostPort = z.string().trim().regex(/^[^\s:]+:\d+$/, { message: 'must be host:port' });
const HostName = z.string().trim().regex(/^[A-Za-z0-9.-]+$/, { message: 'must be a host name' });

const TemporalVars = z.object({
  TEMPORAL_ADDRESS: HostPort.optional(),
  TEMPORAL_NAMESPACE: z.string().trim().min(1).optional(),
  TEMPORAL_TASK_QUEUE: z.string().trim().min(1).default('aggregation-connections'),
  TEMPORAL_API_KEY: z.string().trim().min(1).optional(),
  TEMPORAL_TLS: Bool.optional(),
  /** The server's root CA (PEM): a self-hosted cluster's private CA. Implies TLS. */
  TEMPORAL_TLS_CA_PATH: z.string().trim().min(1).optional(),
  /** The name the server's certificate is checked against (and sent as SNI) instead of the address's host. Implies TLS. */
  TEMPORAL_TLS_SERVER_NAME: HostName.optional(),
  TEMPORAL_TLS_CERT_PATH: z.string().trim().min(1).optional(),
  TEMPORAL_TLS_KEY_PATH: z.string().trim().min(1).optional(),
});
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
const TEMPORAL_TLS_VARS = ['SERVER_CA_CERT', 'CLIENT_CERT', 'CLIENT_KEY'].flatMap((name) => [`TEMPORAL_TLS_${name}_PATH`, `TEMPORAL_TLS_${name}_DATA`]);
const GRPC_META_PREFIX = 'TEMPORAL_GRPC_META_';

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
 * The `temporal` section; `transport` is what src/temporal-connection.ts turns into connection
 * options: an API key, the server's CA and name, and a client certificate pair (both or neither,
 * checkTls saw to it, as it saw that each file is a readable PEM file), only when set. Any of them
 * but the API key means TLS (an API key implies it in temporal-connection.ts, as the SDK does).
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
const EncryptionVars = z.object({
  /**
   * "auto": encrypt with PAYLOAD_ENCRYPTION_KEY; without it, with Temporal on this machine, with a key
   * generated once into PAYLOAD_ENCRYPTION_KEY_FILE; with Temporal elsewhere, refuse to start.
   * "off": store payloads as they are (readable by anyone who can read Temporal).
   */
  PAYLOAD_ENCRYPTION: z.enum(['auto', 'off']).default('auto'),
  PAYLOAD_ENCRYPTION_KEY_FILE: z.string().trim().min(1).default('.temporal/payload-encryption.key'),
  /** Base64 of 32 random bytes. */
  PAYLOAD_ENCRYPTION_KEY: EncryptionKey.optional(),
  /** Written next to each encrypted payload, so a later key can get another id (rotation). */
  PAYLOAD_ENCRYPTION_KEY_ID: z.string().trim().regex(KEY_ID_PATTERN, { message: KEY_ID_RULE }).default('default'),
  /** Earlier keys, `id:base64,...`: decrypt only (never used to encrypt). */
  PAYLOAD_DECRYPTION_KEYS: DecryptionKeys.optional(),
});
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

const PayloadStoreVars = z.object({
  /**
   * "auto": a local directory with Temporal on this machine (the dev stack), none with Temporal
   * elsewhere (a directory is one machine's: several workers need "s3"). "local", "s3" or "off" choose.
   */
  PAYLOAD_STORE: z.enum(['auto', 'local', 's3', 'off']).default('auto'),
  /** Beside the dev server's database: stored payloads must live as long as the histories that point at them. */
  PAYLOAD_STORE_DIRECTORY: z.string().trim().min(1).default('.temporal/payloads'),
  PAYLOAD_STORE_S3_BUCKET: z.string().trim().min(1).optional(),
  PAYLOAD_STORE_S3_PREFIX: z.string().trim().min(1).optional(),
  /** An S3-compatible server (e.g. MinIO); AWS when unset. Credentials: the AWS SDK's default chain (AWS_ACCESS_KEY_ID, ...). */
  PAYLOAD_STORE_S3_ENDPOINT: z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).optional(),
  PAYLOAD_STORE_S3_REGION: z.string().trim().min(1).optional(),
  PAYLOAD_STORE_S3_FORCE_PATH_STYLE: Bool.default(false),
  /** Payloads of at least this many bytes (encrypted) leave history; at most 256 KiB. */
  PAYLOAD_STORE_THRESHOLD_BYTES: z.coerce.number().int().min(0).max(HISTORY_PAYLOAD_LIMIT_BYTES).default(DEFAULT_PAYLOAD_SIZE_THRESHOLD_BYTES),
});
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
const TracingVars = z.object({
  /** Base URL: traces go to <base>/v1/traces. */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ protocol: /^https?$/, message: 'must be an http(s) URL such as http://localhost:4318' }).optional(),
  /** The traces URL itself; wins over OTEL_EXPORTER_OTLP_ENDPOINT. */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.url({ protocol: /^https?$/, message: 'must be an http(s) URL such as http://localhost:4318/v1/traces' }).optional(),
  OTEL_EXPORTER_OTLP_PROTOCOL: z.literal('http/json', { message: 'must be http/json (spans are exported as OTLP JSON over HTTP) or unset' }).optional(),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: z.literal('http/json', { message: 'must be http/json (spans are exported as OTLP JSON over HTTP) or unset' }).optional(),
  OTEL_SERVICE_NAME: z.string().trim().min(1).optional(),
  OTEL_SDK_DISABLED: Bool.default(false),
});
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

const PriorityVars = z.object({
  /** Task Queue priority keys by who waits (1 first): an end user answering, a pipeline, a schedule, forget/retention. */
  PRIORITY_LIVE: PriorityKey.default(DEFAULT_PRIORITY_KEYS.live),
  PRIORITY_PIPELINE: PriorityKey.default(DEFAULT_PRIORITY_KEYS.pipeline),
  PRIORITY_SCHEDULED: PriorityKey.default(DEFAULT_PRIORITY_KEYS.scheduled),
  PRIORITY_MAINTENANCE: PriorityKey.default(DEFAULT_PRIORITY_KEYS.maintenance),
  /** Fairness weights of tenants sharing the fleet (and, with a per-tenant budget, their share of it). */
  TENANT_WEIGHTS: TenantWeights.default(new Map()),
});

const Rps = z.coerce
  .number({ message: 'must be a number of requests per second, from 0.1 to 100000' })
  .min(0.1, { message: 'must be a number of requests per second, from 0.1 to 100000' })
  .max(100_000, { message: 'must be a number of requests per second, from 0.1 to 100000' });

const BudgetVars = z.object({
  /** Requests a second the whole fleet may send the service (all tenants); unset: no fleet budget. */
  SERVICE_BUDGET_RPS: Rps.optional(),
  /** Requests a second one tenant may send, times its TENANT_WEIGHTS weight; unset: SERVICE_BUDGET_RPS. */
  SERVICE_BUDGET_TENANT_RPS: Rps.optional(),
});

/** The fleet's request budget (src/budget/fleet-budget.ts), or undefined when none is configured. */
function budgetSection(env: z.output<typeof BudgetVars>, ctx: z.core.$RefinementCtx) {
  if (env.SERVICE_BUDGET_RPS === undefined) {
    if (env.SERVICE_BUDGET_TENANT_RPS !== undefined) ctx.addIssue({ code: 'custom', path: ['SERVICE_BUDGET_TENANT_RPS'], message: 'needs SERVICE_BUDGET_RPS (the whole fleet\'s budget) too' });
    return undefined;
  }
  const tenantRps = env.SERVICE_BUDGET_TENANT_RPS ?? env.SERVICE_BUDGET_RPS;
  if (tenantRps > env.SERVICE_BUDGET_RPS) ctx.addIssue({ code: 'custom', path: ['SERVICE_BUDGET_TENANT_RPS'], message: `must not exceed SERVICE_BUDGET_RPS (${env.SERVICE_BUDGET_RPS})` });
  return Object.freeze({ totalRps: env.SERVICE_BUDGET_RPS, tenantRps });
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
  /** The worker deployment this fleet's builds belong to; unset, the task queue's name (one deployment per queue). */
  WORKER_DEPLOYMENT_NAME: DeploymentName.optional(),
});

function deploymentSection(env: z.output<typeof DeploymentVars>, taskQueue: string, ctx: z.core.$RefinementCtx) {
  const name = env.WORKER_DEPLOYMENT_NAME ?? taskQueue;
  if (!DEPLOYMENT_PART.test(name)) {
    ctx.addIssue({ code: 'custom', path: ['WORKER_DEPLOYMENT_NAME'], message: `unset, it is the task queue's name ${JSON.stringify(name)}, which ${DEPLOYMENT_PART_RULE}: set WORKER_DEPLOYMENT_NAME` });
  }
  return Object.freeze({ name });
}

// ---- processes ---------------------------------------------------------------------------------

const WorkerEnv = z
  // Loose: Temporal's environment configuration reads variables of its own (withTemporalEnvConfig).
  .looseObject({
    ...TemporalVars.shape,
    AGGREGATOR_BASE_URL: z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).default('http://127.0.0.1:4010'),
    AGGREGATOR_CUSTOMER_ID: z.string().trim().min(1).default('demo-lender'),
    AGGREGATOR_AUTH_HEADER: z.string().trim().regex(/^[A-Za-z0-9-]+$/, { message: 'must be an HTTP header name' }).default('x-api-key'),
    AGGREGATOR_AUTH_SECRET: z.string().min(1).optional(),
    AGGREGATOR_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(60_000),
    WORKER_METRICS_PORT: WorkerMetricsPort,
    WORKER_METRICS_HOST: z.string().trim().min(1).default('127.0.0.1'),
    WORKER_WORKFLOW_BUNDLE: z.string().trim().min(1).optional(),
    ...DeploymentVars.shape,
    /** This build's id; unset, it is taken from the workflow code (a hash of the bundle), so it changes exactly when that code does. */
    WORKER_BUILD_ID: BuildId.optional(),
    /**
     * Whether this worker makes its own build current once it polls: `when-unset` only while the
     * deployment has no current version (a first deploy), `yes` always (a stack on one machine, whose
     * build is the only one), `no` never (an operator promotes: npm run cli -- deployment set-current).
     */
    WORKER_BECOME_CURRENT: z.enum(['no', 'when-unset', 'yes'], { error: 'must be no, when-unset or yes' }).default('when-unset'),
    /** GET /healthz: 200 while the worker runs, 503 while it drains (src/worker-health.ts); 0 turns it off. */
    WORKER_HEALTH_PORT: Port.default(0),
    WORKER_HEALTH_HOST: z.string().trim().min(1).default('127.0.0.1'),
    WORKER_MAX_CACHED_WORKFLOWS: z.coerce.number().int().min(0).max(100_000).optional(),
    /** Threads running workflow code (the SDK's default is 1 with a reused V8 context). */
    WORKER_WORKFLOW_THREADS: z.coerce.number().int().min(1).max(16).optional(),
    /** Activities run at once (the SDK's default 100); the heartbeat polling strategy holds one per pending connection. */
    WORKER_MAX_CONCURRENT_ACTIVITIES: z.coerce.number().int().min(1).max(100_000).optional(),
    /** Long polls for workflow tasks (the SDK's default 10). */
    WORKER_WORKFLOW_POLLERS: z.coerce.number().int().min(2).max(100).optional(),
    /**
     * "memory,cpu" target fractions (e.g. 0.8,0.9): the SDK's resource-based tuner hands out task
     * slots while the host stays under them, instead of fixed slot counts.
     */
    WORKER_RESOURCE_TUNER: z
      .string()
      .trim()
      .regex(/^(0?\.\d+|1(\.0+)?),(0?\.\d+|1(\.0+)?)$/, { message: 'must be two fractions "memory,cpu", e.g. 0.8,0.9' })
      .transform((value) => {
        const [memory, cpu] = value.split(',').map(Number);
        return Object.freeze({ targetMemoryUsage: memory ?? 0, targetCpuUsage: cpu ?? 0 });
      })
      .optional(),
    /** `false` gives each workflow its own V8 context (the SDK's default reuses one): for comparing, not production. */
    WORKER_REUSE_V8_CONTEXT: z.enum(['true', 'false'], { error: 'must be true or false' }).optional(),
    LOG_LEVEL: z.enum(['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR']).default('INFO'),
    /** Retention policy per tenant; off unless set. */
    RETENTION_DAYS: RetentionDays.default(new Map()),
    ...PriorityVars.shape,
    ...BudgetVars.shape,
    ...EncryptionVars.shape,
    ...PayloadStoreVars.shape,
    ...TracingVars.shape,
  })
  .transform(withTemporalEnvConfig)
  .superRefine((env, ctx) => {
    checkTls(env, ctx);
    checkPayloads(env, ctx);
    if (env.WORKER_RESOURCE_TUNER && env.WORKER_MAX_CONCURRENT_ACTIVITIES !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['WORKER_MAX_CONCURRENT_ACTIVITIES'], message: 'cannot be set with WORKER_RESOURCE_TUNER (the tuner sizes the activity slots)' });
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
      /** Liveness for container health checks at http://host:port/healthz; port 0 turns it off. */
      health: Object.freeze({ host: env.WORKER_HEALTH_HOST, port: env.WORKER_HEALTH_PORT }),
      workflows: Object.freeze({
        /** A prebuilt bundle (production); unset, the worker bundles the workflows at start. */
        bundlePath: env.WORKER_WORKFLOW_BUNDLE,
        maxCachedWorkflows: env.WORKER_MAX_CACHED_WORKFLOWS,
        threads: env.WORKER_WORKFLOW_THREADS,
        pollers: env.WORKER_WORKFLOW_POLLERS,
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
const ClientEnv = z
  .looseObject({
    ...TemporalVars.shape,
    AGGREGATOR_CUSTOMER_ID: NonEmpty.default('demo-lender'),
    ...DeploymentVars.shape,
    ...PriorityVars.shape,
    ...BudgetVars.shape,
    ...EncryptionVars.shape,
    ...PayloadStoreVars.shape,
    ...TracingVars.shape,
  })
  .transform(withTemporalEnvConfig)
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
      ...payloadSections(env, ctx),
      ...tracingSection(env, 'aggregation-connections-client'),
    }),
  );

export type ClientConfig = z.output<typeof ClientEnv>;

/** The console reaches Temporal with the client's config; its own is the listener and the payload sections. */
const ConsoleEnv = z
  .looseObject({
    CONSOLE_PORT: ConsolePort,
    /** 127.0.0.1 unless the console sits behind a proxy (0.0.0.0 in a container). */
    CONSOLE_HOST: NonEmpty.default('127.0.0.1'),
    CONSOLE_TOKEN: z
      .string({ message: 'is required: set CONSOLE_TOKEN to a long random secret (e.g. `openssl rand -hex 24`)' })
      .min(16, { message: 'must be at least 16 characters' }),
    /** Browser origins (the Temporal Web UI) allowed to call /codec/encode and /codec/decode. */
    CONSOLE_CODEC_CORS_ORIGINS: CorsOrigins.default(['http://localhost:8233', 'http://127.0.0.1:8233']),
    /** Where the histories the console decodes live (ours, else the Temporal profile's): decides whether a generated local key may be used. */
    TEMPORAL_ADDRESS: TemporalVars.shape.TEMPORAL_ADDRESS,
    ...EncryptionVars.shape,
    ...PayloadStoreVars.shape,
  })
  .transform(withTemporalEnvConfig)
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

const SandboxEnv = z
  .object({
    SANDBOX_PORT: SandboxPort,
    SANDBOX_HOST: NonEmpty.default('127.0.0.1'),
    /** When set, /v3 requests must carry it (x-api-key). */
    SANDBOX_AUTH_SECRET: z.string().min(1).optional(),
    /** Initial request limit of every tenant, per whole second (src/sandbox/rate-limits.ts); unset: unlimited. */
    SANDBOX_RATE_LIMIT_PER_SECOND: z.coerce.number().int().min(1).max(1_000_000).optional(),
  })
  .transform((env) =>
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

/** `npm start`: the ports of the whole stack on 127.0.0.1, each process's own default. */
const DevStackEnv = z
  .object({
    TEMPORAL_PORT: Port.default(7233),
    TEMPORAL_UI_PORT: Port.default(8233),
    SANDBOX_PORT: SandboxPort,
    CONSOLE_PORT: ConsolePort,
    WORKER_METRICS_PORT: WorkerMetricsPort,
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
    }),
  );

export type DevStackConfig = z.output<typeof DevStackEnv>;

/** `npm run demo`: the sandbox where `npm start` runs it (SANDBOX_PORT), unless SANDBOX_URL names another. */
const DemoEnv = z
  .object({
    SANDBOX_URL: z.url({ protocol: /^https?$/, message: 'must be an http(s) URL such as http://127.0.0.1:4010' }).optional(),
    SANDBOX_PORT: SandboxPort,
    DEMO_SCENARIO: NonEmpty.default('two_step_code'),
  })
  .transform((env) =>
    Object.freeze({
      /** SANDBOX_URL, else the sandbox `npm start` runs on SANDBOX_PORT. */
      sandboxUrl: (env.SANDBOX_URL ?? localSandboxUrl(env.SANDBOX_PORT)).replace(/\/+$/, ''),
      scenario: env.DEMO_SCENARIO,
    }),
  );

export type DemoConfig = z.output<typeof DemoEnv>;

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

/**
 * Every process loads its settings here first, so the runtime is checked with the environment.
 * ALLOW_UNSUPPORTED_NODE=true lets bench/runtimes.ts measure the product on the runtime it replaced;
 * nothing else sets it.
 */
function checkNodeRuntime(env: NodeJS.ProcessEnv): void {
  const allow = env.ALLOW_UNSUPPORTED_NODE;
  if (allow !== undefined && allow !== '' && allow !== 'true') {
    throw new ConfigError([`ALLOW_UNSUPPORTED_NODE: expected true or unset, got ${JSON.stringify(allow)}`]);
  }
  const problem = nodeRuntimeProblem(process.versions.node);
  if (problem && allow !== 'true') throw new ConfigError([problem]);
}

function parseEnv<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv): z.output<S> {
  checkNodeRuntime(env);
  const parsed = schema.safeParse(withoutEmpty(env));
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.') || 'environment'}: ${issue.message}`));
  }
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
  const value = env.CONNECTION_PASSWORD;
  return value === undefined || value === '' ? undefined : value;
}

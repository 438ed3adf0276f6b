/**
 * The only reader of process.env: the settings of each process (worker, pipeline client and CLI,
 * operator console, sandbox), zod-parsed once and frozen. A bad or missing value stops start-up
 * with a message naming each offending variable.
 */
import { z } from 'zod';
import { LocalKeyFileError, readOrCreateLocalKey } from './local-key.js';
import { DEFAULT_PAYLOAD_SIZE_THRESHOLD_BYTES, HISTORY_PAYLOAD_LIMIT_BYTES, type PayloadStoreSettings } from './payload-store/settings.js';

const Port = z.coerce.number().int().min(0).max(65_535);
const Bool = z.enum(['true', 'false', '1', '0']).transform((value) => value === 'true' || value === '1');

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

/** The encryption variables, spread into each process's schema. */
const EncryptionEnv = {
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
};
type EncryptionVariables = keyof typeof EncryptionEnv;

interface EncryptionEnvValues {
  TEMPORAL_ADDRESS: string;
  PAYLOAD_ENCRYPTION: 'auto' | 'off';
  PAYLOAD_ENCRYPTION_KEY_FILE: string;
  PAYLOAD_ENCRYPTION_KEY?: Buffer | undefined;
  PAYLOAD_ENCRYPTION_KEY_ID: string;
  PAYLOAD_DECRYPTION_KEYS?: Map<string, Buffer> | undefined;
}

/** Whether Temporal runs on this machine: only then may a generated local key stand in for a real one. */
function isLoopback(address: string): boolean {
  const host = address.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

function checkEncryption(env: EncryptionEnvValues, ctx: z.RefinementCtx): void {
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

/** Payload encryption settings: present only when PAYLOAD_ENCRYPTION_KEY is set. */
export interface PayloadEncryptionConfig {
  /** Id of the key new payloads are encrypted with (PAYLOAD_ENCRYPTION_KEY_ID). */
  readonly keyId: string;
  /** 32 bytes (PAYLOAD_ENCRYPTION_KEY). */
  readonly key: Uint8Array;
  /** Earlier keys by id, for decrypting only (PAYLOAD_DECRYPTION_KEYS). */
  readonly decryptionKeys: ReadonlyMap<string, Uint8Array>;
}

/** What `dataConverterFor` reads: every process's config has it. */
export interface EncryptionSettings {
  readonly encryption?: PayloadEncryptionConfig | undefined;
}

function splitEncryption<T extends EncryptionEnvValues>(parsed: T): { rest: Omit<T, EncryptionVariables>; encryption: { encryption?: PayloadEncryptionConfig } } {
  const {
    PAYLOAD_ENCRYPTION: mode,
    PAYLOAD_ENCRYPTION_KEY_FILE: keyFile,
    PAYLOAD_ENCRYPTION_KEY: key,
    PAYLOAD_ENCRYPTION_KEY_ID: keyId,
    PAYLOAD_DECRYPTION_KEYS: decryptionKeys,
    ...rest
  } = parsed;
  if (mode === 'off') return { rest, encryption: {} };
  const decryptOnly = decryptionKeys ?? new Map<string, Buffer>();
  if (key) return { rest, encryption: { encryption: Object.freeze({ keyId, key, decryptionKeys: decryptOnly }) } };
  // checkEncryption let "auto" without a key through only with Temporal on this machine.
  try {
    const local = readOrCreateLocalKey(keyFile);
    return { rest, encryption: { encryption: Object.freeze({ keyId: local.keyId, key: local.key, decryptionKeys: decryptOnly }) } };
  } catch (error) {
    if (error instanceof LocalKeyFileError) throw new ConfigError([`PAYLOAD_ENCRYPTION_KEY_FILE: ${error.message}`]);
    throw error;
  }
}

// ---- payload store: large payloads outside Temporal history (shared by worker, client/CLI and console)

const PayloadStoreEnv = {
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
};
type PayloadStoreVariables = keyof typeof PayloadStoreEnv;

interface PayloadStoreEnvValues {
  TEMPORAL_ADDRESS: string;
  PAYLOAD_STORE: 'auto' | 'local' | 's3' | 'off';
  PAYLOAD_STORE_DIRECTORY: string;
  PAYLOAD_STORE_S3_BUCKET?: string | undefined;
  PAYLOAD_STORE_S3_PREFIX?: string | undefined;
  PAYLOAD_STORE_S3_ENDPOINT?: string | undefined;
  PAYLOAD_STORE_S3_REGION?: string | undefined;
  PAYLOAD_STORE_S3_FORCE_PATH_STYLE: boolean;
  PAYLOAD_STORE_THRESHOLD_BYTES: number;
}

function checkPayloadStore(env: PayloadStoreEnvValues, ctx: z.RefinementCtx): void {
  if (env.PAYLOAD_STORE === 's3' && !env.PAYLOAD_STORE_S3_BUCKET) {
    ctx.addIssue({ code: 'custom', path: ['PAYLOAD_STORE_S3_BUCKET'], message: 'is required with PAYLOAD_STORE=s3' });
  }
}

/** Where large payloads go (see src/payload-store/). */
export interface PayloadStoreConfig {
  readonly payloadStore: PayloadStoreSettings;
}

function splitPayloadStore<T extends PayloadStoreEnvValues>(parsed: T): { rest: Omit<T, PayloadStoreVariables>; payloadStore: PayloadStoreConfig } {
  const {
    PAYLOAD_STORE: kind,
    PAYLOAD_STORE_DIRECTORY: directory,
    PAYLOAD_STORE_S3_BUCKET: bucket,
    PAYLOAD_STORE_S3_PREFIX: prefix,
    PAYLOAD_STORE_S3_ENDPOINT: endpoint,
    PAYLOAD_STORE_S3_REGION: region,
    PAYLOAD_STORE_S3_FORCE_PATH_STYLE: forcePathStyle,
    PAYLOAD_STORE_THRESHOLD_BYTES: thresholdBytes,
    ...rest
  } = parsed;
  const chosen = kind === 'auto' ? (isLoopback(parsed.TEMPORAL_ADDRESS) ? 'local' : 'off') : kind;
  const settings: PayloadStoreSettings =
    chosen === 'local'
      ? { kind: 'local', directory, thresholdBytes }
      : chosen === 's3'
        ? { kind: 's3', bucket: bucket ?? '', prefix, endpoint, region, forcePathStyle, thresholdBytes }
        : { kind: 'off' };
  return { rest, payloadStore: { payloadStore: Object.freeze(settings) } };
}

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

/** How every process reaches Temporal (worker, pipeline client, CLI, console). */
const TemporalEnv = {
  TEMPORAL_ADDRESS: z.string().trim().regex(/^[^\s:]+:\d+$/, { message: 'must be host:port' }).default('localhost:7233'),
  TEMPORAL_NAMESPACE: z.string().trim().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().trim().min(1).default('aggregation-connections'),
  TEMPORAL_API_KEY: z.string().trim().min(1).optional(),
  TEMPORAL_TLS: Bool.default(false),
  TEMPORAL_TLS_CERT_PATH: z.string().trim().min(1).optional(),
  TEMPORAL_TLS_KEY_PATH: z.string().trim().min(1).optional(),
};

interface TemporalEnvValues {
  TEMPORAL_API_KEY?: string | undefined;
  TEMPORAL_TLS: boolean;
  TEMPORAL_TLS_CERT_PATH?: string | undefined;
  TEMPORAL_TLS_KEY_PATH?: string | undefined;
}

function checkTls(env: TemporalEnvValues, ctx: z.RefinementCtx): void {
  if (Boolean(env.TEMPORAL_TLS_CERT_PATH) !== Boolean(env.TEMPORAL_TLS_KEY_PATH)) {
    ctx.addIssue({ code: 'custom', path: ['TEMPORAL_TLS_CERT_PATH'], message: 'TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH go together' });
  }
}

/** API key and TLS settings of the connection to Temporal (see src/temporal-connection.ts). */
export interface TemporalTransport {
  readonly apiKey?: string | undefined;
  readonly tls: boolean;
  readonly tlsCertPath?: string | undefined;
  readonly tlsKeyPath?: string | undefined;
}

export function temporalTransportOf(env: TemporalEnvValues): TemporalTransport {
  return Object.freeze({ apiKey: env.TEMPORAL_API_KEY, tls: env.TEMPORAL_TLS, tlsCertPath: env.TEMPORAL_TLS_CERT_PATH, tlsKeyPath: env.TEMPORAL_TLS_KEY_PATH });
}

const WorkerEnv = z.object({
  ...TemporalEnv,

  AGGREGATOR_BASE_URL: z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).default('http://127.0.0.1:4010'),
  AGGREGATOR_CUSTOMER_ID: z.string().trim().min(1).default('demo-lender'),
  AGGREGATOR_AUTH_HEADER: z.string().trim().regex(/^[A-Za-z0-9-]+$/, { message: 'must be an HTTP header name' }).default('x-api-key'),
  AGGREGATOR_AUTH_SECRET: z.string().min(1).optional(),
  AGGREGATOR_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(60_000),

  WORKER_METRICS_PORT: Port.default(9464),
  WORKER_METRICS_HOST: z.string().trim().min(1).default('127.0.0.1'),
  WORKER_WORKFLOW_BUNDLE: z.string().trim().min(1).optional(),
  WORKER_MAX_CACHED_WORKFLOWS: z.coerce.number().int().min(0).max(100_000).optional(),
  /** Threads running workflow code (the SDK's default is 1 with a reused V8 context). */
  WORKER_WORKFLOW_THREADS: z.coerce.number().int().min(1).max(16).optional(),
  LOG_LEVEL: z.enum(['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR']).default('INFO'),
  /** Retention policy per tenant; off unless set. */
  RETENTION_DAYS: RetentionDays.default(new Map()),
  ...EncryptionEnv,
  ...PayloadStoreEnv,
}).superRefine((env, ctx) => {
  checkTls(env, ctx);
  checkEncryption(env, ctx);
  checkPayloadStore(env, ctx);
});

/** The worker's variables by name, except the encryption and payload-store ones, which become `encryption` and `payloadStore`. */
export type WorkerConfig = Readonly<Omit<z.infer<typeof WorkerEnv>, EncryptionVariables | PayloadStoreVariables>> & EncryptionSettings & PayloadStoreConfig;

const NonEmpty = z.string().trim().min(1, { message: 'must not be empty' });

/** What the pipeline client and the CLI need to reach the connections. */
const ClientEnv = z.object({
  ...TemporalEnv,
  AGGREGATOR_CUSTOMER_ID: NonEmpty.default('demo-lender'),
  ...EncryptionEnv,
  ...PayloadStoreEnv,
}).superRefine((env, ctx) => {
  checkTls(env, ctx);
  checkEncryption(env, ctx);
  checkPayloadStore(env, ctx);
});

export interface ClientConfig extends EncryptionSettings, PayloadStoreConfig {
  readonly address: string;
  readonly transport: TemporalTransport;
  readonly namespace: string;
  readonly taskQueue: string;
  /** The tenant (lender) that new connections belong to unless told otherwise. */
  readonly customerId: string;
}

const ConsoleEnv = z.object({
  CONSOLE_PORT: Port.default(8080),
  /** 127.0.0.1 unless the console sits behind a proxy (0.0.0.0 in a container). */
  CONSOLE_HOST: NonEmpty.default('127.0.0.1'),
  CONSOLE_TOKEN: z
    .string({ message: 'is required: set CONSOLE_TOKEN to a long random secret (e.g. `openssl rand -hex 24`)' })
    .min(16, { message: 'must be at least 16 characters' }),
  /** Browser origins (the Temporal Web UI) allowed to call /codec/encode and /codec/decode. */
  CONSOLE_CODEC_CORS_ORIGINS: CorsOrigins.default(['http://localhost:8233', 'http://127.0.0.1:8233']),
  /** Where the histories the console decodes live: decides whether a generated local key may be used. */
  TEMPORAL_ADDRESS: TemporalEnv.TEMPORAL_ADDRESS,
  ...EncryptionEnv,
  ...PayloadStoreEnv,
}).superRefine((env, ctx) => {
  checkEncryption(env, ctx);
  checkPayloadStore(env, ctx);
});

export interface ConsoleConfig extends EncryptionSettings, PayloadStoreConfig {
  readonly port: number;
  readonly host: string;
  readonly token: string;
  /** Origins allowed to call the codec endpoint cross-origin, with credentials (CONSOLE_CODEC_CORS_ORIGINS). */
  readonly codecCorsOrigins: readonly string[];
}

const SandboxEnv = z.object({
  SANDBOX_PORT: Port.default(4010),
  SANDBOX_HOST: NonEmpty.default('127.0.0.1'),
  SANDBOX_AUTH_SECRET: z.string().min(1).optional(),
});

export type SandboxConfig = Readonly<z.infer<typeof SandboxEnv>>;

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

function parseEnv<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv): z.output<S> {
  const parsed = schema.safeParse(withoutEmpty(env));
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.') || 'environment'}: ${issue.message}`));
  }
  return parsed.data;
}

export function loadWorkerConfig(env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  const { rest: parsed, encryption } = splitEncryption(parseEnv(WorkerEnv, env));
  const { rest, payloadStore } = splitPayloadStore(parsed);
  return Object.freeze({ ...rest, ...encryption, ...payloadStore });
}

export function loadClientConfig(env: NodeJS.ProcessEnv = process.env): ClientConfig {
  const { rest: withStore, encryption } = splitEncryption(parseEnv(ClientEnv, env));
  const { rest: parsed, payloadStore } = splitPayloadStore(withStore);
  return Object.freeze({
    address: parsed.TEMPORAL_ADDRESS,
    transport: temporalTransportOf(parsed),
    namespace: parsed.TEMPORAL_NAMESPACE,
    taskQueue: parsed.TEMPORAL_TASK_QUEUE,
    customerId: parsed.AGGREGATOR_CUSTOMER_ID,
    ...encryption,
    ...payloadStore,
  });
}

export function loadConsoleConfig(env: NodeJS.ProcessEnv = process.env): ConsoleConfig {
  const { rest: withStore, encryption } = splitEncryption(parseEnv(ConsoleEnv, env));
  const { rest: parsed, payloadStore } = splitPayloadStore(withStore);
  return Object.freeze({
    port: parsed.CONSOLE_PORT,
    host: parsed.CONSOLE_HOST,
    token: parsed.CONSOLE_TOKEN,
    codecCorsOrigins: Object.freeze(parsed.CONSOLE_CODEC_CORS_ORIGINS),
    ...encryption,
    ...payloadStore,
  });
}

export function loadSandboxConfig(env: NodeJS.ProcessEnv = process.env): SandboxConfig {
  return Object.freeze(parseEnv(SandboxEnv, env));
}

/** The CLI's `start` reads a live password from here when --password-stdin is not given (never from a flag). */
export function connectionPasswordFromEnv(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = env.CONNECTION_PASSWORD;
  return value === undefined || value === '' ? undefined : value;
}

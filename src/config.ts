/**
 * The only reader of process.env: the settings of each process (worker, pipeline client and CLI,
 * operator console, sandbox), zod-parsed once and frozen. A bad or missing value stops start-up
 * with a message naming each offending variable.
 */
import { z } from 'zod';

const Port = z.coerce.number().int().min(0).max(65_535);
const Bool = z.enum(['true', 'false', '1', '0']).transform((value) => value === 'true' || value === '1');

const WorkerEnv = z.object({
  TEMPORAL_ADDRESS: z.string().trim().regex(/^[^\s:]+:\d+$/, { message: 'must be host:port' }).default('localhost:7233'),
  TEMPORAL_NAMESPACE: z.string().trim().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().trim().min(1).default('aggregation-connections'),
  TEMPORAL_API_KEY: z.string().trim().min(1).optional(),
  TEMPORAL_TLS: Bool.default(false),
  TEMPORAL_TLS_CERT_PATH: z.string().trim().min(1).optional(),
  TEMPORAL_TLS_KEY_PATH: z.string().trim().min(1).optional(),

  AGGREGATOR_BASE_URL: z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).default('http://127.0.0.1:4010'),
  AGGREGATOR_CUSTOMER_ID: z.string().trim().min(1).default('demo-lender'),
  AGGREGATOR_AUTH_HEADER: z.string().trim().regex(/^[A-Za-z0-9-]+$/, { message: 'must be an HTTP header name' }).default('x-api-key'),
  AGGREGATOR_AUTH_SECRET: z.string().min(1).optional(),
  AGGREGATOR_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(60_000),

  WORKER_METRICS_PORT: Port.default(9464),
  WORKER_METRICS_HOST: z.string().trim().min(1).default('127.0.0.1'),
  WORKER_WORKFLOW_BUNDLE: z.string().trim().min(1).optional(),
  WORKER_MAX_CACHED_WORKFLOWS: z.coerce.number().int().min(0).max(100_000).optional(),
  LOG_LEVEL: z.enum(['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR']).default('INFO'),
}).superRefine((env, ctx) => {
  if (Boolean(env.TEMPORAL_TLS_CERT_PATH) !== Boolean(env.TEMPORAL_TLS_KEY_PATH)) {
    ctx.addIssue({ code: 'custom', path: ['TEMPORAL_TLS_CERT_PATH'], message: 'TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH go together' });
  }
});

export type WorkerConfig = Readonly<z.infer<typeof WorkerEnv>>;

const NonEmpty = z.string().trim().min(1, { message: 'must not be empty' });

/** What the pipeline client and the CLI need to reach the connections. */
const ClientEnv = z.object({
  TEMPORAL_ADDRESS: WorkerEnv.shape.TEMPORAL_ADDRESS,
  TEMPORAL_NAMESPACE: NonEmpty.default('default'),
  TEMPORAL_TASK_QUEUE: NonEmpty.default('aggregation-connections'),
  AGGREGATOR_CUSTOMER_ID: NonEmpty.default('demo-lender'),
});

export interface ClientConfig {
  readonly address: string;
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
});

export interface ConsoleConfig {
  readonly port: number;
  readonly host: string;
  readonly token: string;
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
  return Object.freeze(parseEnv(WorkerEnv, env));
}

export function loadClientConfig(env: NodeJS.ProcessEnv = process.env): ClientConfig {
  const parsed = parseEnv(ClientEnv, env);
  return Object.freeze({ address: parsed.TEMPORAL_ADDRESS, namespace: parsed.TEMPORAL_NAMESPACE, taskQueue: parsed.TEMPORAL_TASK_QUEUE, customerId: parsed.AGGREGATOR_CUSTOMER_ID });
}

export function loadConsoleConfig(env: NodeJS.ProcessEnv = process.env): ConsoleConfig {
  const parsed = parseEnv(ConsoleEnv, env);
  return Object.freeze({ port: parsed.CONSOLE_PORT, host: parsed.CONSOLE_HOST, token: parsed.CONSOLE_TOKEN });
}

export function loadSandboxConfig(env: NodeJS.ProcessEnv = process.env): SandboxConfig {
  return Object.freeze(parseEnv(SandboxEnv, env));
}

/** The CLI's `start` reads a live password from here when --password-stdin is not given (never from a flag). */
export function connectionPasswordFromEnv(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = env.CONNECTION_PASSWORD;
  return value === undefined || value === '' ? undefined : value;
}

/**
 * Environment of the client-side tools (CLI and operator console), zod-parsed once. Kept to the
 * variables these tools need so it can merge into `src/config.ts` (the project's env reader) later.
 */
import { z } from 'zod';
import { describeIssues } from '../aggregator/schemas.js';

const NonEmpty = z.string().trim().min(1, { message: 'must not be empty' });

export const ClientConfig = z.object({
  TEMPORAL_ADDRESS: NonEmpty.default('localhost:7233'),
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

export const ConsoleConfig = z.object({
  CONSOLE_PORT: z.coerce.number().int().min(0).max(65_535).default(8080),
  /** Interface to listen on; 127.0.0.1 unless the console is put behind a proxy (0.0.0.0 in a container). */
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

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    message: string,
    readonly problems: string,
  ) {
    super(message);
  }
}

/** Empty strings count as unset, as in most `.env` files. */
function withoutBlanks(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => typeof entry[1] === 'string' && entry[1] !== ''));
}

export function loadClientConfig(env: NodeJS.ProcessEnv = process.env): ClientConfig {
  const parsed = ClientConfig.safeParse(withoutBlanks(env));
  if (!parsed.success) throw new ConfigError(`invalid environment: ${describeIssues(parsed.error)}`, describeIssues(parsed.error));
  return Object.freeze({
    address: parsed.data.TEMPORAL_ADDRESS,
    namespace: parsed.data.TEMPORAL_NAMESPACE,
    taskQueue: parsed.data.TEMPORAL_TASK_QUEUE,
    customerId: parsed.data.AGGREGATOR_CUSTOMER_ID,
  });
}

export function loadConsoleConfig(env: NodeJS.ProcessEnv = process.env): ConsoleConfig {
  const parsed = ConsoleConfig.safeParse(withoutBlanks(env));
  if (!parsed.success) throw new ConfigError(`invalid environment: ${describeIssues(parsed.error)}`, describeIssues(parsed.error));
  return Object.freeze({ port: parsed.data.CONSOLE_PORT, host: parsed.data.CONSOLE_HOST, token: parsed.data.CONSOLE_TOKEN });
}

/** The CLI's `start` reads a live password from here when --password-stdin is not given (never from a flag). */
export function passwordFromEnv(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = env.CONNECTION_PASSWORD;
  return value === undefined || value === '' ? undefined : value;
}

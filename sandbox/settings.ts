/**
 * The sandbox's settings (`npm run sandbox`): loadSandboxConfig { port, host, authSecret?,
 * rateLimitPerSecond?, stateFile?, sessionIdleMs? }; and SANDBOX_URL, a running sandbox the demo and the benchmarks may use.
 */
import { z } from 'zod';
import { NonEmpty, Port, doc, group } from '../src/settings/document.js';
import { parseEnv } from '../src/settings/load.js';

export const SandboxPort = doc(
  Port.default(4010),
  'The sandbox listens on this port; `npm start` starts it there, and `npm run demo` looks for it there unless SANDBOX_URL says otherwise.',
);

export const SandboxUrl = doc(
  z.url({ protocol: /^https?$/, message: 'must be an http(s) URL such as http://127.0.0.1:4010' }).optional(),
  'A running sandbox to use instead of the local one.',
  { defaultText: 'http://127.0.0.1:SANDBOX_PORT (`npm run demo`), an in-process sandbox (bench/sandbox-throughput.ts)' },
);

export const SandboxVars = group(
  z.object({
    SANDBOX_HOST: doc(NonEmpty.default('127.0.0.1'), 'The address the sandbox listens on.'),
    SANDBOX_PORT: SandboxPort,
    SANDBOX_AUTH_SECRET: doc(z.string().min(1).optional(), 'When set, /v3 requests must carry it in the x-api-key header (else 401 ACCESS_DENIED).', {
      secret: true,
    }),
    SANDBOX_RATE_LIMIT_PER_SECOND: doc(
      z.coerce.number().int().min(1).max(1_000_000).optional(),
      'Requests a second the sandbox takes from each tenant before it answers 429 TOO_MANY_REQUESTS with Retry-After (sandbox/rate-limits.ts); POST /sandbox/rate-limits changes it per tenant at run time.',
      { defaultText: 'unlimited' },
    ),
    SANDBOX_SESSION_IDLE_S: doc(
      z.coerce.number().int().min(1).max(86_400).optional(),
      "Seconds a session with no request may wait before the sandbox forgets it (then SESSION_NONEXISTENT, as the service does after about 8 minutes). Longer only for `npm run bench:waiting`, which holds up to 10,000 challenged connections at once on two shared cores; leave it unset to meet the service's limit.",
      { defaultText: "480 (the service's)" },
    ),
    SANDBOX_STATE_FILE: doc(
      NonEmpty.optional(),
      'A file (relative to the working directory) where the sandbox keeps its tenants, saved logins, sessions and their operations (sandbox/state-file.ts): read at start, written after every change before the reply, so a restart, even after a kill -9, forgets nothing a client was told. Missing: the sandbox starts empty and creates it; unreadable or of another version: the sandbox does not start, naming the file. `npm start` does not read it: its sandbox keeps its state beside its workflow history (.temporal/dev-stack-v<release>-sandbox.json).',
      { defaultText: 'in memory only' },
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
    ...(env.SANDBOX_STATE_FILE === undefined ? {} : { stateFile: env.SANDBOX_STATE_FILE }),
    ...(env.SANDBOX_SESSION_IDLE_S === undefined ? {} : { sessionIdleMs: env.SANDBOX_SESSION_IDLE_S * 1000 }),
  }),
);

export type SandboxConfig = z.output<typeof SandboxEnv>;

export function loadSandboxConfig(env?: NodeJS.ProcessEnv): SandboxConfig {
  return parseEnv(SandboxEnv, env);
}

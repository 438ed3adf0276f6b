/**
 * `npm run sandbox`: runs the sandbox on SANDBOX_HOST:SANDBOX_PORT until SIGINT/SIGTERM.
 * Env (validated; a bad value exits naming the variable): SANDBOX_PORT (default 4010),
 * SANDBOX_HOST (default 127.0.0.1), SANDBOX_AUTH_SECRET (optional: require it in x-api-key),
 * SANDBOX_RATE_LIMIT_PER_SECOND (optional: every tenant's initial request limit; POST /sandbox/rate-limits changes it),
 * SANDBOX_STATE_FILE (optional: keep the state in this file across restarts; one that cannot be used exits naming it),
 * SANDBOX_SESSION_IDLE_S (optional: how long an unused session lives; the service's 8 minutes by default).
 */
import { ConfigError } from '../src/settings/load.js';
import { loadSandboxConfig, type SandboxConfig } from './settings.js';
import { SANDBOX_CUSTOMER_ID } from './customer.js';
import { createSandbox, type Sandbox } from './server.js';
import { StateFileError } from './state-file.js';

let env: SandboxConfig;
try {
  env = loadSandboxConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(`sandbox: ${error.message}`);
  process.exit(1);
}

let sandbox: Sandbox;
try {
  sandbox = await createSandbox({
    port: env.port,
    host: env.host,
    authSecret: env.authSecret,
    rateLimitPerSecond: env.rateLimitPerSecond,
    stateFile: env.stateFile,
    ...(env.sessionIdleMs === undefined ? {} : { sessionIdleMs: env.sessionIdleMs }),
  });
} catch (error) {
  if (!(error instanceof StateFileError)) throw error;
  console.error(`sandbox: ${error.message}`);
  process.exit(1);
}
console.log(`sandbox listening on ${sandbox.url}`);
console.log(`  service base:        ${sandbox.url}/v3/${SANDBOX_CUSTOMER_ID}/ (any customer id works and is its own tenant)`);
console.log(`  default customer id: ${SANDBOX_CUSTOMER_ID}`);
console.log(`  scenarios & answers: ${sandbox.url}/sandbox/scenarios`);
if (env.authSecret) console.log(`  calling-application auth: header ${sandbox.options.authHeader} required`);
if (env.rateLimitPerSecond !== undefined)
  console.log(`  request limit:       ${env.rateLimitPerSecond} per second per tenant (${sandbox.url}/sandbox/rate-limits)`);
if (env.stateFile !== undefined) console.log(`  state kept in:       ${env.stateFile}`);

let stopping = false;
const stop = (signal: string) => {
  if (stopping) return;
  stopping = true;
  console.log(`sandbox: ${signal} received, closing`);
  sandbox.close().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error('sandbox: error while closing', error);
      process.exit(1);
    },
  );
};
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));

/**
 * `npm run demo`'s settings (scripts/demo.ts): loadDemoConfig { sandboxUrl, scenario }; it reaches
 * Temporal with loadClientConfig.
 */
import { z } from 'zod';
import { localSandboxUrl } from './lib/dev-stack-settings.js';
import { NonEmpty, doc, group } from '../src/settings/document.js';
import { parseEnv } from '../src/settings/load.js';
import { SandboxPort, SandboxUrl } from '../sandbox/settings.js';

export const DemoVars = group(
  z.object({
    SANDBOX_URL: SandboxUrl,
    DEMO_SCENARIO: doc(NonEmpty.default('two_step_code'), "The live connection's scenario: any challenge username of GET /sandbox/scenarios."),
  }),
  'Demo (`npm run demo`)',
  'The demo runs against `npm start`: it reaches Temporal with the client settings and finds the sandbox as the dev stack starts it (SANDBOX_PORT), unless SANDBOX_URL names another.',
);

export const DemoEnv = z.object({ ...DemoVars.shape, SANDBOX_PORT: SandboxPort }).transform((env) =>
  Object.freeze({
    /** SANDBOX_URL, else the sandbox `npm start` runs on SANDBOX_PORT. */
    sandboxUrl: (env.SANDBOX_URL ?? localSandboxUrl(env.SANDBOX_PORT)).replace(/\/+$/, ''),
    scenario: env.DEMO_SCENARIO,
  }),
);

export type DemoConfig = z.output<typeof DemoEnv>;

/** `npm run demo`: its sandbox and scenario (it reaches Temporal with loadClientConfig). */
export function loadDemoConfig(env?: NodeJS.ProcessEnv): DemoConfig {
  return parseEnv(DemoEnv, env);
}

/**
 * `npm start`'s settings (scripts/dev-stack.ts): loadDevStackConfig
 *   { ports: { temporal, ui, sandbox, console, workerMetrics }, host, sandboxUrl, workerBecomeCurrent,
 *     consoleToken?, consoleCodecCorsOrigins?, keyProvider }; each process's port keeps its own process's default.
 */
import { z } from 'zod';
import { ConsolePort, ConsoleVars } from '../../src/settings/console.js';
import { Port, doc, group } from '../../src/settings/document.js';
import { KeyProviderVars } from '../../src/settings/kms.js';
import { parseEnv } from '../../src/settings/load.js';
import { EncryptionVars } from '../../src/settings/encryption-keys.js';
import { SandboxPort } from '../../sandbox/settings.js';
import { WorkerMetricsPort, WorkerVars } from '../../src/settings/worker.js';

/** Where the processes of `npm start` listen. */
const DEV_STACK_HOST = '127.0.0.1';

/** The sandbox `npm start` runs on `port`: the dev stack starts it there, the demo looks for it there. */
export function localSandboxUrl(port: number): string {
  return `http://${DEV_STACK_HOST}:${port}`;
}

export const DevStackVars = group(
  z.object({
    TEMPORAL_PORT: doc(Port.default(7233), "The Temporal dev server's gRPC port."),
    TEMPORAL_UI_PORT: doc(Port.default(8233), "The Temporal Web UI's port."),
    DEV_KEY_PROVIDER: doc(
      z.enum(['static', 'openbao'], { error: 'must be static or openbao' }).default('static'),
      '"static": payloads encrypted with the generated local key (or PAYLOAD_ENCRYPTION_KEY). "openbao": the stack also starts a local OpenBao (state in .temporal/openbao-dev/, its unseal key and root token in a 0600 file there: a dev machine only) and gives the worker and console PAYLOAD_KEY_PROVIDER=vault-transit with its address and a token limited to datakey and decrypt; the local key still reads the payloads written before. `npm start` then provisions OpenBao first (prestart).',
    ),
  }),
  'Dev stack (`npm start`)',
  "The whole stack on 127.0.0.1: Temporal, its Web UI, the sandbox (SANDBOX_PORT), the worker (WORKER_METRICS_PORT; WORKER_BECOME_CURRENT yes unless set) and the console (CONSOLE_PORT; a CONSOLE_TOKEN generated unless set). Every other variable reaches the worker and the console as they are; TEMPORAL_ADDRESS and AGGREGATOR_BASE_URL are the stack's.",
);

/** `npm start`: the ports of the whole stack on 127.0.0.1, each process's own default, and what it gives its worker and console. */
export const DevStackEnv = z
  .object({
    ...DevStackVars.shape,
    PAYLOAD_KEY_PROVIDER: KeyProviderVars.shape.PAYLOAD_KEY_PROVIDER,
    PAYLOAD_ENCRYPTION: EncryptionVars.shape.PAYLOAD_ENCRYPTION,
    SANDBOX_PORT: SandboxPort,
    CONSOLE_PORT: ConsolePort,
    WORKER_METRICS_PORT: WorkerMetricsPort,
    WORKER_BECOME_CURRENT: doc(
      WorkerVars.shape.WORKER_BECOME_CURRENT.unwrap().default('yes'),
      '`npm start` gives its worker `yes` unless set: the only build on this machine, new connections start on it even when the persisted history made an older build current.',
    ),
    CONSOLE_TOKEN: doc(ConsoleVars.shape.CONSOLE_TOKEN.optional(), "`npm start` generates one for the run unless set, and prints the console's URL with it.", {
      defaultText: 'generated',
      secret: true,
    }),
    CONSOLE_CODEC_CORS_ORIGINS: doc(
      ConsoleVars.shape.CONSOLE_CODEC_CORS_ORIGINS.unwrap().optional(),
      "`npm start` lets its own Web UI call the console's codec endpoint unless set.",
      {
        defaultText: 'http://127.0.0.1:TEMPORAL_UI_PORT,http://localhost:TEMPORAL_UI_PORT',
      },
    ),
  })
  .superRefine((env, ctx) => {
    // The stack's OpenBao would silently replace a provider chosen by hand, or encrypt what was meant to be clear.
    if (env.DEV_KEY_PROVIDER !== 'openbao') return;
    if (env.PAYLOAD_KEY_PROVIDER !== 'static')
      ctx.addIssue({
        code: 'custom',
        path: ['DEV_KEY_PROVIDER'],
        message: `is openbao but PAYLOAD_KEY_PROVIDER is ${env.PAYLOAD_KEY_PROVIDER}: the stack sets the provider itself; unset one of them`,
      });
    if (env.PAYLOAD_ENCRYPTION === 'off')
      ctx.addIssue({ code: 'custom', path: ['DEV_KEY_PROVIDER'], message: 'is openbao but PAYLOAD_ENCRYPTION is off: unset one of them' });
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
      /** openbao: the stack starts a local OpenBao and its processes use vault-transit. */
      keyProvider: env.DEV_KEY_PROVIDER,
    }),
  );

export type DevStackConfig = z.output<typeof DevStackEnv>;

export function loadDevStackConfig(env?: NodeJS.ProcessEnv): DevStackConfig {
  return parseEnv(DevStackEnv, env);
}

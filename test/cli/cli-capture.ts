/** Runs the operator CLI in-process against a test stack, with its output captured (cli.test.ts, book-cli.test.ts). */
import { runCli } from '../../src/cli/run-cli.js';
import type { ConnectionsClient } from '../../src/client/index.js';
import type { ConnectionStack } from '../helpers/connection-stack.js';

export interface Captured {
  code: number;
  out: string;
  err: string;
}

export async function runCaptured(
  args: string[],
  target: { readonly stack: ConnectionStack; readonly client: ConnectionsClient },
  options: { env?: Record<string, string>; stdin?: string } = {},
): Promise<Captured> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, {
    out: (line) => out.push(line),
    err: (line) => err.push(line),
    readStdin: () => Promise.resolve(options.stdin ?? ''),
    env: { AGGREGATOR_CUSTOMER_ID: target.stack.customerId, TEMPORAL_TASK_QUEUE: target.stack.taskQueue, ...options.env },
    // The test's client shares the environment's connection; closing it is a no-op.
    connect: () => Promise.resolve(target.client),
    now: () => Date.now(),
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    program: 'connections',
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

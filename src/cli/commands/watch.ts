/** `watch`: follows a connection, a line whenever something changes, until it ends. */
import { isTerminalStatus } from '../../client/connections.js';
import { ConnectionFailedError } from '../../client/errors.js';
import { printable, progressLine } from '../terminal-view.js';
import { onePositional, parseFlags, UsageError } from '../args.js';
import type { Command } from '../command.js';
import { EXIT_FAILED, EXIT_OK } from '../report.js';

export const watch: Command = {
  access: { permission: 'read' },
  summary: "follow a connection's progress until it ends",
  usage: (program) => `Usage: ${program} watch <workflowId> [--interval <ms>]

Follows a connection: prints a line (elapsed, status, polls, pending operation, challenge) whenever
something changes, until the connection ends. Exit 0 when it completed, 1 when it failed.
  --interval <ms>   how often to look (default 1000)`,

  async run(args, { io, client }) {
    const { values, positionals } = parseFlags({ args: [...args], options: { interval: { type: 'string' } }, allowPositionals: true });
    const workflowId = onePositional(positionals, '<workflowId>');
    const interval = values.interval === undefined ? 1000 : Number(values.interval);
    if (!Number.isInteger(interval) || interval < 50 || interval > 60_000) throw new UsageError('--interval must be milliseconds from 50 to 60000');
    const connections = await client();
    // The result long-polls Temporal and settles when the workflow closes, however it closes.
    let ended: { ok: true } | { ok: false; error: unknown } | undefined;
    const result = connections.result(workflowId).then(
      () => (ended = { ok: true }),
      (error: unknown) => (ended = { ok: false, error }),
    );
    let last = '';
    for (;;) {
      let state;
      try {
        state = await connections.getState(workflowId);
      } catch (error) {
        if (ended) break;
        throw error;
      }
      const key = JSON.stringify([state.status, state.totalPolls, state.pending?.pollCount, state.pending?.operation, state.challengeSet?.id, state.retrieved]);
      if (key !== last) {
        io.out(progressLine(state, io.now()));
        last = key;
      }
      if (ended || isTerminalStatus(state.status)) break;
      await Promise.race([io.sleep(interval), result]);
    }
    await result;
    const outcome = ended as { ok: true } | { ok: false; error: unknown };
    if (outcome.ok) {
      io.out(`connection ${workflowId} completed`);
      return EXIT_OK;
    }
    if (outcome.error instanceof ConnectionFailedError) {
      io.err(
        `connection ${workflowId} ended: ${outcome.error.type}${outcome.error.serviceCode ? ` [${outcome.error.serviceCode}]` : ''}: ${printable(outcome.error.reason)}`,
      );
      return EXIT_FAILED;
    }
    throw outcome.error;
  },
};

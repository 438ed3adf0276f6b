/** `activity`: who did what to a connection (start, answers with their outcome, signals, cancel, termination), from its history. */
import { printable } from '../terminal-view.js';
import { onePositional, parseFlags } from '../args.js';
import type { Command } from '../command.js';
import { EXIT_OK } from '../report.js';

export const activity: Command = {
  access: { permission: 'read' },
  summary: 'who started, answered, signalled or cancelled a connection, and when',
  usage: (program) => `Usage: ${program} activity <workflowId> [--json]

Reads the connection's history: its start, each answer (with its outcome), each signal, a cancel
request and a termination, each with the identity that sent it (an operator signed in to the
console shows as "console:<name> <subject>"; a pipeline or this CLI as its Temporal client identity)
and when. An answer the workflow refused before accepting it is not in history.
  --json                print the entries as JSON`,

  async run(args, { io, client }) {
    const { values, positionals } = parseFlags({ args: [...args], options: { json: { type: 'boolean' } }, allowPositionals: true });
    const workflowId = onePositional(positionals, '<workflowId>');
    const entries = await (await client()).activity(workflowId);
    if (values.json) {
      io.out(JSON.stringify(entries, null, 2));
      return EXIT_OK;
    }
    for (const entry of entries) {
      const what = [entry.action, entry.name, entry.outcome && `→ ${entry.outcome}`, entry.reason && `(${entry.reason})`].filter(Boolean).join(' ');
      io.out(`${entry.at}  ${printable(what).padEnd(36)}  ${printable(entry.who)}`);
    }
    return EXIT_OK;
  },
};

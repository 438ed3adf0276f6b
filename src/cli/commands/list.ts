/** `list`: connections by status, newest first, through Temporal visibility. */
import { CONNECTION_STATUSES } from '../../contract/connection/connection-definitions.js';
import type { ConnectionStatus } from '../../contract/connection/connection-definitions.js';
import type { ConnectionSummary } from '../../client/connection-summary.js';
import { noPositionals, parseFlags, UsageError } from '../args.js';
import type { Command } from '../command.js';
import { EXIT_OK, formatTable } from '../report.js';

export const list: Command = {
  access: { permission: 'read' },
  summary: 'connections by status (default: those awaiting an answer)',
  usage: (program) => `Usage: ${program} list [--status <status> | --all] [--customer <id>] [--institution <name>] [--login-id <id>] [--limit <n>] [--json]

Lists connections newest first through Temporal visibility (may lag a second behind).
  --status <status>     ${CONNECTION_STATUSES.join(', ')} (default AwaitingAnswer)
  --all                 any status
  --customer <id>       only this tenant (default: any)
  --institution <name>  only this institution
  --login-id <id>       only this login
  --limit <n>           at most n connections (default 50)
  --json                print JSON instead of a table`,

  async run(args, { io, client }) {
    const { values, positionals } = parseFlags({
      args: [...args],
      options: {
        status: { type: 'string' },
        all: { type: 'boolean' },
        customer: { type: 'string' },
        institution: { type: 'string' },
        'login-id': { type: 'string' },
        limit: { type: 'string' },
        json: { type: 'boolean' },
      },
      allowPositionals: true,
    });
    noPositionals(positionals);
    if (values.all && values.status !== undefined) throw new UsageError('--all and --status exclude each other');
    const status = values.all ? undefined : (values.status ?? 'AwaitingAnswer');
    if (status !== undefined && !(CONNECTION_STATUSES as readonly string[]).includes(status)) {
      throw new UsageError(`--status must be one of ${CONNECTION_STATUSES.join(', ')} (got "${status}")`);
    }
    const limit = values.limit === undefined ? 50 : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError('--limit must be a whole number from 1 to 1000');
    const connections = await (
      await client()
    ).list({
      status: status as ConnectionStatus | undefined,
      customerId: values.customer,
      institution: values.institution,
      loginId: values['login-id'],
      limit,
    });
    if (values.json) {
      io.out(JSON.stringify(connections, null, 2));
      return EXIT_OK;
    }
    if (connections.length === 0) {
      io.out(`no connections${status ? ` with status ${status}` : ''}`);
      return EXIT_OK;
    }
    for (const line of table(connections)) io.out(line);
    return EXIT_OK;
  },
};

function table(connections: readonly ConnectionSummary[]): string[] {
  // Visibility can list workflows this project did not start: formatTable makes every cell printable.
  const rows = connections.map((c) => [c.workflowId, c.status ?? `(${c.executionStatus})`, c.institution ?? c.loginId ?? '', c.customerId ?? '', c.startedAt]);
  return formatTable(['WORKFLOW ID', 'STATUS', 'INSTITUTION / LOGIN', 'CUSTOMER', 'STARTED'], rows);
}

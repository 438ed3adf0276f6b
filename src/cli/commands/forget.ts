/**
 * `forget`: forgets a saved login (its refresh schedule, retention timer, the saved card at the
 * service, its connections' stored payloads and histories) and prints what was deleted and when.
 * Forgetting again succeeds, reporting what was already gone.
 */
import type { ForgetRecord } from '../../contract/retention/forget-definitions.js';
import { ForgetFailedError } from '../../client/errors.js';
import { printable } from '../terminal-view.js';
import { parseLoginArgs } from '../login-args.js';
import type { Command } from '../command.js';
import { EXIT_FAILED, EXIT_OK } from '../report.js';

export const forget: Command = {
  access: { permission: 'administer', tenant: 'default-customer' },
  audit: { action: 'login.forget' },
  summary: 'forget a saved login: schedule, card, stored payloads, histories',
  usage: (program) => `Usage: ${program} forget <loginId> [--customer <id>] [--json]

Runs the forget workflow of the login and waits for its record: the refresh schedule deleted, the
retention timer ended, the saved card deleted at the service (waiting while it is in use), and the
stored payloads and histories of the login's connections deleted. Cannot be undone.
  --customer <id>       tenant of the login (default AGGREGATOR_CUSTOMER_ID)
  --json                print the record as JSON`,

  async run(args, context) {
    const { io, client } = context;
    const { ref, json } = parseLoginArgs(args, context, { json: true });
    const { loginId } = ref;
    let record: ForgetRecord;
    try {
      record = await (await client()).logins.forget(ref);
    } catch (error) {
      if (!(error instanceof ForgetFailedError)) throw error;
      io.err(`forgetting login ${loginId} did not finish (${printable(error.type)}): ${printable(error.reason)}`);
      io.err(`what it deleted stays deleted; run "forget ${loginId}" again to finish (workflow ${error.workflowId})`);
      return EXIT_FAILED;
    }
    if (json) {
      io.out(JSON.stringify(record, null, 2));
      return EXIT_OK;
    }
    for (const line of describeRecord(record)) io.out(line);
    return EXIT_OK;
  },
};

function describeRecord(record: ForgetRecord): string[] {
  const payloads = 'deleted' in record.payloads ? `${record.payloads.deleted} deleted from ${record.payloads.store}` : 'no payload store';
  return [
    `forgot login ${record.loginId} of ${record.customerId} (${record.startedAt} to ${record.completedAt})`,
    `  schedule         ${record.schedule}`,
    `  retention timer  ${record.retentionTimer}`,
    `  card             ${record.card}${record.cardInUseWaits > 0 ? ` (after ${record.cardInUseWaits} waits while in use)` : ''}`,
    `  histories        ${record.connections.count} connection${record.connections.count === 1 ? '' : 's'} deleted`,
    `  payloads         ${payloads}`,
  ];
}

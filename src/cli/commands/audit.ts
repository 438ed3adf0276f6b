/** `audit`: the audit trail of a tenant (or every one) over a time range, as a table or as JSON lines. */
import { AUDIT_ACTIONS } from '../../audit/audit-entry.js';
import { AuditTrail, openAuditStore, toJsonLines } from '../../audit/audit-trail.js';
import { loadAuditStoreLocation } from '../../settings/audit.js';
import { noPositionals, parseFlags, UsageError } from '../args.js';
import { cliIdentity } from '../cli-audit.js';
import type { Command } from '../command.js';
import { EXIT_OK, formatTable } from '../report.js';

const MAX_LIMIT = 10_000;

function timeFlag(name: string, text: string | undefined): Date | undefined {
  if (text === undefined) return undefined;
  const at = new Date(text);
  if (!/^\d{4}-\d{2}-\d{2}/.test(text) || Number.isNaN(at.getTime()))
    throw new UsageError(`--${name}: must be an ISO 8601 time such as 2026-11-29T00:00:00Z (got ${JSON.stringify(text)})`);
  return at;
}

export const audit: Command = {
  access: { permission: 'administer' },
  summary: 'who answered, cancelled, decoded, changed or forgot what, and who signed in',
  usage: (program) => `Usage: ${program} audit [--customer <id>] [--from <time>] [--to <time>] [--limit <n>] [--jsonl]

Reads the audit trail the console writes (AUDIT_STORE: a postgres:// address, or file:<path>; the
development default is file:.temporal/audit.jsonl): each action (${AUDIT_ACTIONS.join(', ')}) with
who, when, the tenant, the connection or login, and its outcome (ok, refused, failed, or unknown when
the process ended before it could record one). Oldest first.
  --customer <id>       one tenant's entries (default: every tenant's, and sign-ins)
  --from <time>         from this ISO 8601 time (inclusive)
  --to <time>           until this time (exclusive)
  --limit <n>           at most this many (default 1000, at most ${MAX_LIMIT})
  --jsonl               print JSON lines, one entry a line (an export)
The CLI reads with the store's own credentials, so no console role applies; the read is itself
recorded, under the identity signed in with login (else this machine's user).`,

  async run(args, { io }) {
    const { values, positionals } = parseFlags({
      args: [...args],
      options: { customer: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, limit: { type: 'string' }, jsonl: { type: 'boolean' } },
      allowPositionals: true,
    });
    noPositionals(positionals);
    const from = timeFlag('from', values.from);
    const to = timeFlag('to', values.to);
    if (from && to && from >= to) throw new UsageError('--from must be before --to');
    const limit = values.limit === undefined ? 1_000 : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
      throw new UsageError(`--limit: must be a whole number from 1 to ${MAX_LIMIT} (got ${JSON.stringify(values.limit)})`);
    if (values.customer !== undefined && (values.customer.length === 0 || values.customer.length > 200))
      throw new UsageError('--customer: must be 1 to 200 characters');

    const trail = new AuditTrail(openAuditStore(loadAuditStoreLocation(io.env)));
    try {
      const reading = await trail.begin({ actor: (await cliIdentity(io.env)).actor, action: 'audit.read', tenant: values.customer });
      // This read's own attempt is recorded first: it is not one of the entries it reads.
      const entries = (await trail.query({ tenant: values.customer, from, to, limit: limit + 1 })).filter((entry) => entry.id !== reading.id).slice(0, limit);
      await reading.end('ok', `${entries.length} entr${entries.length === 1 ? 'y' : 'ies'}`);
      if (values.jsonl) {
        const text = toJsonLines(entries);
        if (text) io.out(text.trimEnd());
        return EXIT_OK;
      }
      const rows = entries.map((entry) => [
        entry.at,
        entry.actor.name,
        entry.action,
        entry.tenant ?? '-',
        entry.target ?? '-',
        [entry.outcome, entry.outcomeDetail].filter(Boolean).join(': '),
      ]);
      for (const line of formatTable(['AT', 'WHO', 'ACTION', 'TENANT', 'TARGET', 'OUTCOME'], rows)) io.out(line);
      io.out(`${entries.length} entr${entries.length === 1 ? 'y' : 'ies'} from ${trail.store.where}`);
      return EXIT_OK;
    } finally {
      await trail.close();
    }
  },
};

/**
 * `start`: starts a connection (live, cached or refresh of a saved login) under a business key, or
 * finds the one already running under it, and waits for its first step.
 */
import type { ConnectionInputArgs } from '../../contract/connection/connection-input.js';
import { connectionKey } from '../../client/business-key.js';
import { printable } from '../terminal-view.js';
import { noPositionals, parseFlags, readPassword, UsageError } from '../args.js';
import { printChallengeSet } from '../challenge-output.js';
import type { Command } from '../command.js';
import { PRODUCT_OPTIONS, PRODUCTS_HELP, productsFrom } from '../products.js';
import { EXIT_FAILED, EXIT_OK } from '../report.js';

export const start: Command = {
  // Starting a connection with an end user's credentials is the pipeline's, not an operator's: admin.
  access: { permission: 'administer', tenant: 'default-customer' },
  audit: { action: 'start' },
  summary: 'start a connection (live, cached or refresh)',
  usage: (
    program,
  ) => `Usage: ${program} start (--application-id <id> | --key <businessKey>) [session] [products] [--customer <id>] [--no-wait] [--rerun never|if-failed|always]

Starts a connection (or finds the one already running under the same key) and waits for its first
step: the first challenges to answer, an open session, or its end.
Session (one of):
  --institution <name> --username <name> [--password-stdin] [--no-save]
                        live: the password is read from stdin with --password-stdin, else from
                        the CONNECTION_PASSWORD environment variable (never from a flag)
  --login-id <uuid>     cached: data of an earlier session
  --login-id <uuid> --refresh
                        refresh a saved login live
Products (at least one):
${PRODUCTS_HELP}
Other:
  --customer <id>       tenant (default AGGREGATOR_CUSTOMER_ID)
  --application-id <id> business key becomes connection-<customer>:<id>
  --key <key>           the business key itself
  --no-wait             return once started instead of waiting for the first step
  --rerun <policy>      when the key's earlier connection ended: never, if-failed (default), always`,

  async run(args, context) {
    const { io, program, client } = context;
    const { values, positionals } = parseFlags({
      args: [...args],
      options: {
        'application-id': { type: 'string' },
        key: { type: 'string' },
        customer: { type: 'string' },
        institution: { type: 'string' },
        username: { type: 'string' },
        'password-stdin': { type: 'boolean' },
        'no-save': { type: 'boolean' },
        'login-id': { type: 'string' },
        refresh: { type: 'boolean' },
        ...PRODUCT_OPTIONS,
        'no-wait': { type: 'boolean' },
        rerun: { type: 'string' },
      },
      allowPositionals: true,
    });
    noPositionals(positionals);
    // Read only without --customer: the default comes from the client config.
    const customerId = values.customer ?? context.defaultCustomerId;
    if ((values['application-id'] === undefined) === (values.key === undefined)) throw new UsageError('give exactly one of --application-id and --key');
    const key = values.key ?? connectionKey(customerId, values['application-id'] ?? '');

    let session: ConnectionInputArgs['session'];
    const live = values.institution !== undefined || values.username !== undefined;
    if (live && values['login-id'] !== undefined) throw new UsageError('give either --institution/--username (live) or --login-id (cached/refresh), not both');
    if (live) {
      if (values.institution === undefined || values.username === undefined) throw new UsageError('a live connection needs --institution and --username');
      const password = await readPassword(io, values['password-stdin'] === true);
      session = { kind: 'live', institution: values.institution, username: values.username, password, save: !values['no-save'] };
    } else if (values['login-id'] !== undefined) {
      session = { kind: values.refresh ? 'refresh' : 'cached', loginId: values['login-id'] };
    } else {
      throw new UsageError('missing session: --institution and --username (live), or --login-id (cached)');
    }

    const products = productsFrom(values);
    const rerun = values.rerun ?? 'if-failed';
    if (rerun !== 'never' && rerun !== 'if-failed' && rerun !== 'always') throw new UsageError('--rerun must be never, if-failed or always');

    const input: ConnectionInputArgs = { customerId, session, products };
    const connections = await client();
    if (values['no-wait']) {
      await connections.start(key, input, { rerun });
      io.out(`started ${key}`);
      return EXIT_OK;
    }
    const step = await connections.startAndAwaitFirstStep(key, input, { rerun });
    io.out(`connection ${step.workflowId}`);
    switch (step.step) {
      case 'challenge':
        io.out('');
        await printChallengeSet(io, program, step.workflowId, step.challengeSet, undefined);
        return EXIT_OK;
      case 'session-open':
        io.out(`session open (login ${step.loginId}); retrieving data: "watch ${step.workflowId}" to follow`);
        return EXIT_OK;
      case 'ended':
        if (step.status === 'Completed') {
          io.out('the connection already completed');
          return EXIT_OK;
        }
        io.err(
          `the connection ended: ${step.status}${step.failure ? ` (${step.failure.type}${step.failure.serviceCode ? ` [${step.failure.serviceCode}]` : ''}: ${printable(step.failure.message)})` : ''}`,
        );
        return EXIT_FAILED;
    }
  },
};

/**
 * security:check's attack on a tenant's book: an entry forged in visibility under the tenant's id,
 * its record sealed with another tenant's key. A book refresh reads its entries' records from their
 * memos (src/activities/book-activities.ts); it must open each in the entry's own context, so a record
 * another tenant's key sealed is reported as unreadable and never starts a connection in this
 * tenant's name.
 */
import { randomUUID } from 'node:crypto';
import { defaultPayloadConverter, type Payload, type PayloadCodec } from '@temporalio/common';
import {
  BOOK_ENTRY_MEMO,
  BOOK_ENTRY_WORKFLOW_TYPE,
  bookConnectionWorkflowId,
  bookEntryWorkflowId,
  type BookEnrolment,
} from '../../src/contract/book/book-definitions.js';
import { BookCadenceKey, CustomerIdKey, LoginIdKey } from '../../src/contract/search-attributes.js';
import { savedLogin } from './admission-attacks.js';
import { startForgedRow } from './forged-rows.js';
import { until, type AttackResult, type MessageTarget } from './attacks.js';

const ATTACK_NAME = "a book entry forged in visibility, its record sealed with another tenant's key";

/** How long the refresh of the attacked book may take: two logins, one page. */
const REFRESH_WAIT_MS = 120_000;

/**
 * The tenant's book holds one genuine login; two more entries are started raw under the tenant's
 * search attributes (as an enrolment's, with a long start delay so no worker runs them), each record
 * naming a login of the tenant's and sealed with another tenant's key: one under the id an entry of
 * that login has, one under an id of no tenant. A refresh of that book must refresh the genuine
 * login, report both forged ones as malformed, and start no connection for either.
 */
export async function forgedBookEntryAttack(
  target: MessageTarget,
  sandboxUrl: string,
  otherTenant: { readonly codec: PayloadCodec; readonly workflowId: string },
): Promise<AttackResult> {
  const { customerId } = target;
  const namespace = target.raw.options.namespace;
  const books = target.connections.books;
  const cadence = `forged-${randomUUID().slice(0, 8)}`;
  // Logins of their own (the sandbox derives a LoginId from the username and tenant; other attacks use pending_polls_1).
  const genuine = await savedLogin(sandboxUrl, customerId, 'pending_polls_2');
  await books.enrol({ customerId, loginId: genuine, cadence, products: { accountsDetail: {} }, timing: { pollIntervalMs: 200 } });
  const forgedLogin = await savedLogin(sandboxUrl, customerId, 'pending_polls_3');
  // Two rows: the id an entry of that login has, and an id of no tenant (whose context would check no
  // key): the bare LoginId of another of the tenant's logins, which a record can name as its login.
  const freeId = await savedLogin(sandboxUrl, customerId, 'pending_polls_4');
  const forgeries = [
    { entryId: bookEntryWorkflowId(customerId, forgedLogin), loginId: forgedLogin },
    { entryId: freeId, loginId: freeId },
  ];
  for (const { entryId, loginId } of forgeries) {
    const record: BookEnrolment = { customerId, loginId, cadence, session: 'cached', products: { accountsDetail: {} }, enrolledAt: new Date().toISOString() };
    const [sealed] = await otherTenant.codec.encode([defaultPayloadConverter.toPayload(record)], {
      type: 'workflow',
      namespace,
      workflowId: otherTenant.workflowId,
    });
    const memo: Record<string, Payload> = sealed ? { [BOOK_ENTRY_MEMO.enrolment]: sealed } : {};
    await startForgedRow(target, {
      workflowId: entryId,
      workflowType: BOOK_ENTRY_WORKFLOW_TYPE,
      memo,
      keywords: { [CustomerIdKey.name]: customerId, [LoginIdKey.name]: loginId, [BookCadenceKey.name]: cadence },
    });
  }
  try {
    await until(
      async () => ((await books.count({ customerId, cadence })) === 1 + forgeries.length ? true : undefined),
      'the genuine and the forged entries in visibility',
    );
    const { refreshWorkflowId } = await books.run({ customerId, cadence });
    const ended = await until(
      async () => ((await books.progress(refreshWorkflowId)).status === 'completed' ? true : undefined),
      `${refreshWorkflowId} completed`,
      REFRESH_WAIT_MS,
    ).catch(() => false);
    const report = ended ? await books.report(refreshWorkflowId) : undefined;
    if (!report) {
      // A refresh the forged entries stall is an attack that got through too (the tenant's book stops).
      const progress = await books.cancel(refreshWorkflowId, 'security-check: the attacked refresh did not end').catch(() => undefined);
      return {
        name: ATTACK_NAME,
        refused: false,
        detail: `the refresh did not end within ${REFRESH_WAIT_MS / 1000} s (${progress ? JSON.stringify(progress.counts) : 'its progress unread'})`,
      };
    }
    const outcomes = (await Promise.all(report.pages.map((_, index) => books.reportPage(refreshWorkflowId, index + 1)))).flatMap((page) => page.outcomes);
    const genuineOutcome = outcomes.find((outcome) => outcome.loginId === genuine)?.outcome;
    const verdicts = await Promise.all(
      forgeries.map(async ({ loginId }, index) => {
        const outcome = outcomes.find((entry) => entry.loginId === loginId);
        const connection = await target.sealed.workflow
          .getHandle(bookConnectionWorkflowId(customerId, loginId, report.night))
          .describe()
          .then(
            () => 'started',
            () => 'none',
          );
        // The entry's own id: refused by its key (the context check itself). An id of no tenant:
        // refused for its id, before its memo is opened (the later check that its login is still
        // enrolled would also miss it, but a row at the entry's id beside it would pass that one).
        const reason = index === 0 ? /sealed for tenant/ : /not one of .* book entries/;
        const refused = connection === 'none' && outcome?.outcome === 'malformed' && reason.test(outcome.problem ?? '');
        return {
          refused,
          detail: `${index === 0 ? "the entry's id" : 'an id of no tenant'}: ${outcome?.outcome ?? 'not read'}${outcome?.problem ? ` (${outcome.problem.slice(0, 110)})` : ''}, its connection ${connection}`,
        };
      }),
    );
    return {
      name: ATTACK_NAME,
      refused: verdicts.every((verdict) => verdict.refused) && genuineOutcome === 'refreshed',
      detail: `${verdicts.map((verdict) => verdict.detail).join('; ')}; the genuine login ${genuineOutcome ?? 'not read'}`,
    };
  } finally {
    for (const { entryId } of forgeries)
      await target.sealed.workflow
        .getHandle(entryId)
        .terminate('security-check: the forged book entry ends')
        .catch(() => undefined);
    await books.remove({ customerId, loginId: genuine }).catch(() => undefined);
  }
}

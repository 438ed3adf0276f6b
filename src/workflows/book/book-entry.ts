/**
 * One login's place in its tenant's book: an idle workflow that holds the enrolment in its memo and
 * its cadence and end-user flag in search attributes, so the book's refresh lists it through
 * visibility (a page at a time) and skips it while flagged. It waits for messages only: enrolled
 * again (new settings, the flag cleared), flagged, or leaving the book (it then ends). It continues
 * as new before its history grows long. Deterministic code only.
 */
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  log,
  setCurrentDetails,
  setHandler,
  setWorkflowOptions,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import {
  BOOK_ENTRY_MEMO,
  bookEntryQuery,
  enrolSignal,
  flagEntrySignal,
  leaveBookSignal,
  type BookEnrolment,
  type BookEntryFlag,
  type BookEntryState,
} from '../../contract/book/book-definitions.js';
import { BookCadenceKey, EndUserChallengeKey } from '../../contract/search-attributes.js';
import { isoNow } from '../connection/state-recorder.js';

/** Messages handled before the entry continues as new (each is a few history events). */
const MESSAGES_PER_RUN = 500;

export async function bookEntryWorkflow(initial: BookEnrolment, carriedFlag?: BookEntryFlag): Promise<BookEntryState> {
  let state: BookEntryState = { enrolment: initial, flag: carriedFlag };
  let messages = 0;
  const describe = () =>
    setCurrentDetails(
      state.left
        ? `Left the book of ${state.enrolment.customerId}: ${state.left.reason}`
        : `Login ${state.enrolment.loginId} in the ${state.enrolment.cadence} book of ${state.enrolment.customerId} (${state.enrolment.session})` +
            (state.flag ? `; skipped until enrolled again: needs its end user (${state.flag.reason})` : ''),
    );
  setHandler(bookEntryQuery, () => state);

  setHandler(enrolSignal, (enrolment) => {
    messages += 1;
    // A record that does not name this login is refused here: the memo must always describe the entry.
    if (enrolment?.loginId !== state.enrolment.loginId || enrolment?.customerId !== state.enrolment.customerId) {
      log.warn('book enrolment ignored: it names another login', { loginId: state.enrolment.loginId });
      return;
    }
    const cadenceChanged = enrolment.cadence !== state.enrolment.cadence;
    state = { enrolment, flag: undefined };
    upsertMemo({ [BOOK_ENTRY_MEMO.enrolment]: enrolment, [BOOK_ENTRY_MEMO.flag]: undefined });
    upsertSearchAttributes([...(cadenceChanged ? [{ key: BookCadenceKey, value: enrolment.cadence }] : []), { key: EndUserChallengeKey, value: null }]);
    describe();
  });

  setHandler(flagEntrySignal, (flag) => {
    messages += 1;
    if (state.left || typeof flag?.reason !== 'string') return;
    state = { ...state, flag };
    upsertMemo({ [BOOK_ENTRY_MEMO.flag]: flag });
    upsertSearchAttributes([{ key: EndUserChallengeKey, value: flag.reason.slice(0, 100) }]);
    describe();
  });

  setHandler(leaveBookSignal, (leave) => {
    messages += 1;
    state = { ...state, left: { reason: String(leave?.reason ?? 'removed').slice(0, 300), at: isoNow() } };
  });

  // The start carries the memo and search attributes; a run continued as new re-states them.
  if (workflowInfo().continuedFromExecutionRunId !== undefined) {
    upsertMemo({ [BOOK_ENTRY_MEMO.enrolment]: state.enrolment, ...(state.flag ? { [BOOK_ENTRY_MEMO.flag]: state.flag } : {}) });
  }
  describe();
  await condition(() => state.left !== undefined || messages >= MESSAGES_PER_RUN);
  await condition(allHandlersFinished);
  if (!state.left) await continueAsNew<typeof bookEntryWorkflow>(state.enrolment, state.flag);
  describe();
  log.info('login left the book', { loginId: state.enrolment.loginId, reason: state.left?.reason });
  return state;
}

/** AutoUpgrade: an entry lives as long as the login is enrolled; its next task runs on the current build. */
setWorkflowOptions({ versioningBehavior: 'AUTO_UPGRADE' }, bookEntryWorkflow);

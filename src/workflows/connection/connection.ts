/**
 * The connection workflow: one connection to the aggregation service, from opening a session
 * through multi-factor challenges to the requested data. Deterministic code only.
 *
 * Status: Authorizing → AwaitingAnswer ⇄ Authorizing → Retrieving → Completed | Failed | Cancelled.
 *
 * This function registers the handlers and runs the steps; the state lives in state-recorder.ts,
 * answers in answer-inbox.ts, the session in session.ts and the retrieval in retrieval.ts.
 */
import {
  CancellationScope,
  allHandlersFinished,
  condition,
  isCancellation,
  log,
  proxyLocalActivities,
  setHandler,
  setWorkflowOptions,
  workflowInfo,
} from '@temporalio/workflow';
import type { InputActivities } from '../../activities/input-activities.js';
import type { RetentionActivities } from '../../activities/retention-activities.js';
import type { ConnectionInput, ConnectionInputArgs } from '../../contract/connection/connection-input.js';
import { callbackWorkflowId } from '../../contract/callbacks/callback-definitions.js';
import { AnswerInbox } from './answer-inbox.js';
import {
  answerChallengeSignal,
  awaitFirstStepUpdate,
  connectionStateQuery,
  submitAnswerUpdate,
  type ConnectionFailureInfo,
  type ConnectionResult,
  type FirstStep,
} from '../../contract/connection/connection-definitions.js';
import { serviceDetailsOf, toConnectionFailure } from './failures.js';
import { retrieveProducts } from './retrieval.js';
import { callbackOfEnd, startCallback } from '../callbacks/completion-callback.js';
import { needsAdmission } from '../../contract/admission/admission-definitions.js';
import { AdmissionTicket } from '../admission/connection-admission.js';
import { tellWindow, windowEndOf } from '../window/connection-window-end.js';
import { openSession } from './session.js';
import { StateRecorder } from './state-recorder.js';
import { UNTIL_IT_LANDS_RETRY } from '../../retry/activity-retry.js';

/** Input validation runs outside the workflow sandbox (see input-activities.ts); it never retries. */
const { validateConnectionInput } = proxyLocalActivities<InputActivities>({
  startToCloseTimeout: '10s',
  retry: { maximumAttempts: 1 },
  summary: 'validate input',
});

/**
 * Tells the tenant's retention policy that the login's data was just retrieved (the activity does
 * nothing when the tenant has none). Retried until it lands: a lost notice would forget the login early.
 */
const { noteRetrieval } = proxyLocalActivities<RetentionActivities>({
  startToCloseTimeout: '30s',
  retry: UNTIL_IT_LANDS_RETRY,
  summary: 'note the retrieval for the retention policy',
});

/**
 * One connection: validate, (unattended) wait for room, open the session through its challenges,
 * retrieve, note the retrieval for retention, and tell whoever waits how it ended. Pinned to its
 * build (Worker Deployment Versioning), so a change of its steps needs no patch (patches.ts).
 */
export async function connectionWorkflow(args: ConnectionInputArgs): Promise<ConnectionResult> {
  const recorder = new StateRecorder(args);
  const inbox = new AnswerInbox();
  const ticket = new AdmissionTicket();
  let firstStep: FirstStep | undefined;
  const reportFirstStep = (step: FirstStep) => {
    firstStep ??= step;
  };

  // Every handler is registered before the first await: an update, such as update-with-start's, is
  // refused if its handler does not exist in the activation that delivers it.
  setHandler(connectionStateQuery, () => recorder.state);

  /** A signal cannot be refused to its sender: the rejection is kept for the query and the log. */
  const refuseSignal = (problem: string) => {
    log.warn('answer signal refused', { problem: problem.slice(0, 200) });
    recorder.reject({ source: 'validator', message: problem, challengeSetId: recorder.state.challengeSet?.id });
  };
  const judgeParkedSignals = () => inbox.unpark(recorder.state).forEach(refuseSignal);

  setHandler(answerChallengeSignal, (answer) => {
    const problem = inbox.receiveSignal(answer, recorder.state);
    if (problem !== undefined) refuseSignal(problem);
  });

  setHandler(submitAnswerUpdate, (answer) => inbox.outcomeOf(inbox.enqueue(answer, true)), {
    validator: (answer) => {
      const problem = inbox.problemWith(answer, recorder.state, 'submitAnswer');
      if (problem) throw new Error(problem);
    },
    description: 'Answer the current challenge set; refused before it is recorded if the answer does not fit the challenges.',
  });

  setHandler(
    awaitFirstStepUpdate,
    async () => {
      await condition(() => firstStep !== undefined);
      return firstStep as FirstStep;
    },
    { description: 'Wait for the first challenge set or an open session (for update-with-start).' },
  );

  let input: ConnectionInput | undefined;
  let result: ConnectionResult | undefined;
  try {
    input = await validateConnectionInput(args);
    recorder.adopt(input);
    // Unattended and outside a book: room first.
    if (needsAdmission(input, workflowInfo().workflowId)) await ticket.wait(input, recorder);
    const open = await openSession({ input, recorder, inbox, reportFirstStep, judgeParkedSignals });
    recorder.patch({
      status: 'Retrieving',
      loginId: open.login.Id,
      requestId: open.requestId,
      institution: recorder.state.institution ?? open.institution,
      challengeSet: undefined,
    });
    reportFirstStep({ step: 'session-open', loginId: open.login.Id, requestId: open.requestId });
    judgeParkedSignals();
    result = await retrieveProducts(input, open, recorder);
    await noteRetrieval({ customerId: input.customerId, loginId: result.loginId, at: new Date().toISOString(), workflowId: workflowInfo().workflowId });
    recorder.patch({ status: 'Completed', pending: undefined });
    log.info('connection completed', { loginId: result.loginId, retrieved: recorder.state.retrieved, totalPolls: recorder.state.totalPolls });
    return result;
  } catch (error) {
    if (isCancellation(error)) {
      recorder.patch({ status: 'Cancelled', pending: undefined });
      throw error;
    }
    const failure = toConnectionFailure(error);
    const info: ConnectionFailureInfo = {
      type: failure.type as ConnectionFailureInfo['type'],
      message: failure.message,
      serviceCode: serviceDetailsOf(error)?.serviceCode,
    };
    recorder.patch({ status: 'Failed', failure: info, pending: undefined });
    log.warn('connection failed', { type: info.type, serviceCode: info.serviceCode });
    throw failure;
  } finally {
    // Answers still waiting for a verdict learn that the connection ended; then let handlers return.
    judgeParkedSignals();
    const { status, failure } = recorder.state;
    inbox.endAll({ outcome: 'ended', status, failure });
    reportFirstStep({ step: 'ended', status, failure });
    // A connection started with a callback URL (none recorded before callbacks existed, so no patch: its branch is never taken on replay).
    const { workflowId, runId } = workflowInfo();
    const callback = callbackOfEnd(input, recorder.state, result, { workflowId, runId });
    if (callback !== undefined) {
      await startCallback(callback);
      recorder.patch({ callback: { deliveryWorkflowId: callbackWorkflowId(callback.delivery.customerId, runId), webhookId: callback.delivery.webhookId } });
    }
    // A book's connection tells its refresh how it ended, an admitted one its admission (none recorded before 2026-11-29 has `book`, none before 2026-11-30 asked an admission: no patch).
    const windowEnd = windowEndOf(input, recorder.state, result, { workflowId, runId }, ticket.admission);
    if (windowEnd !== undefined) await tellWindow(windowEnd);
    // Mostly none are left: then no wait (and none of the promises it would make in the sandbox).
    if (!allHandlersFinished()) await CancellationScope.nonCancellable(() => condition(allHandlersFinished));
  }
}

/** Pinned: a connection (at most ~45 minutes) finishes on the build it started on, so a deploy that changes its steps needs no patched(). */
setWorkflowOptions({ versioningBehavior: 'PINNED' }, connectionWorkflow);

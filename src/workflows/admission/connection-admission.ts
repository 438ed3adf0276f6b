/**
 * An unattended connection started outside a book waits for room at its tenant's admission
 * (admission.ts) before its first call to the service, so a storm of independent starts queues
 * instead of flooding the fleet. Live connections and a book's own connections (its refresh is
 * their window) start at once. Deterministic code only.
 */
import { condition, log, proxyLocalActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { AdmissionActivities } from '../../activities/admission-activities.js';
import {
  ADMISSION_ASK_AGAIN_MS,
  admissionGrantSignal,
  admissionWorkflowId,
  HELD_START_MEMO,
  type AdmissionGrant,
} from '../../contract/admission/admission-definitions.js';
import type { ConnectionInput } from '../../contract/connection/connection-input.js';
import { DEFAULT_PRIORITY_KEYS } from '../../contract/priority.js';
import type { StateRecorder } from '../connection/state-recorder.js';
import { UNTIL_IT_LANDS_RETRY } from '../../retry/activity-retry.js';

/** Retried until it lands: Temporal unreachable for a while delays the connection, never loses it. */
const admission = proxyLocalActivities<AdmissionActivities>({
  startToCloseTimeout: '30s',
  retry: UNTIL_IT_LANDS_RETRY,
  summary: "ask the tenant's unattended window for room",
});

/** The connection's side of its admission: the grant handler (registered before the first await) and the wait. */
export class AdmissionTicket {
  private granted = false;
  /** The admission asked (its workflow id): told the connection's end, whatever it was. */
  private askedOf: string | undefined;
  /** Started held by the product's client, queued at its admission already: the grant that begins it comes before any ask. */
  private readonly held = workflowInfo().memo?.[HELD_START_MEMO] === true;

  constructor() {
    setHandler(admissionGrantSignal, (grant) => {
      const problem = this.grantProblem(grant);
      if (problem !== undefined) return void log.warn('admission grant ignored', { problem });
      this.granted = true;
    });
  }

  /**
   * Why a grant is not room: not a grant (a payload not sealed reaches here as a marker), or one
   * before this run asked (forged, or for an earlier run of the id); started held, a release must
   * name this run (its signal-with-start reaches the id's current run, whichever that is).
   */
  private grantProblem(grant: AdmissionGrant | undefined): string | undefined {
    if (typeof grant?.admissionRunId !== 'string') return 'not a grant';
    if (this.askedOf !== undefined) return undefined;
    if (!this.held) return 'sent before the connection asked';
    return grant.runId === workflowInfo().runId ? undefined : 'a release for another run of this id';
  }

  get admission(): string | undefined {
    return this.askedOf;
  }

  /**
   * Asks for room and waits for it; asks again every `timing.admissionAskAgainMs` (an admission
   * terminated by hand, a full queue). Returns at once where the worker admits without a window
   * (UNATTENDED_ADMISSION=off: the activity's answer is in history, so a replay takes the same way).
   */
  async wait(input: ConnectionInput, recorder: StateRecorder): Promise<void> {
    const { workflowId, runId, priority, startTime } = workflowInfo();
    // Before the ask: its grant can arrive in the same activation as the ask's result, and signals are handled first.
    this.askedOf = admissionWorkflowId(input.customerId);
    if (this.held && this.granted) {
      // Queued by the client at its start, and released with its grant: no ask, no wait.
      recorder.patch({ admission: { queuedAt: startTime.toISOString(), admittedAt: new Date().toISOString() } });
      return;
    }
    const request = { customerId: input.customerId, workflowId, runId, priorityKey: priority?.priorityKey ?? DEFAULT_PRIORITY_KEYS.scheduled };
    const queuedAt = this.held ? startTime.toISOString() : new Date().toISOString();
    if ((await admission.askAdmission(request)) === 'off') {
      this.askedOf = undefined;
      return;
    }
    recorder.patch({ admission: { queuedAt } });
    for (let asks = 2; !(await condition(() => this.granted, input.timing.admissionAskAgainMs ?? ADMISSION_ASK_AGAIN_MS)); asks += 1) {
      log.warn('no room granted yet: asking the admission again', { asks, queuedAt });
      // The workers were switched off meanwhile: go on (its end is still told, to leave the queue).
      if ((await admission.askAdmission(request)) === 'off') break;
    }
    recorder.patch({ admission: { queuedAt, admittedAt: new Date().toISOString() } });
  }
}

/**
 * A tenant's admission (src/contract/admission/admission-definitions.ts): the window every unattended
 * connection started outside a book passes through, so a storm of independent starts becomes a
 * queue the fleet works through at the pace it carries, while live connections start at once.
 *
 * This file is the wiring; the queue, the grants and the window are `AdmissionRun`'s
 * (admission-run.ts). Started by the first connection's request or client's wake (signal-with-start); continues as
 * new every few hundred grants; ends after a minute with nothing queued or in flight (the next
 * request starts it again). Operators read `admissionState` (query) and the Web UI's current
 * details. Deterministic code only.
 */
import { makeContinueAsNewFunc, setHandler, setWorkflowOptions } from '@temporalio/workflow';
import {
  admissionRequestSignal,
  admissionStateQuery,
  admissionWakeSignal,
  type AdmissionInput,
  type AdmissionSummary,
} from '../../contract/admission/admission-definitions.js';
import { bookLoginEndedSignal } from '../../contract/book/book-definitions.js';
import { AdmissionRun, admissionSettings } from './admission-run.js';

export async function connectionAdmissionWorkflow(input: AdmissionInput): Promise<AdmissionSummary> {
  const admission = new AdmissionRun(input, admissionSettings(input));
  setHandler(admissionStateQuery, () => admission.state());
  setHandler(admissionRequestSignal, (request) => admission.request(request));
  setHandler(admissionWakeSignal, (wake) => admission.wake(wake));
  setHandler(bookLoginEndedSignal, (end) => admission.ended(end));
  const end = await admission.run();
  if ('summary' in end) return end.summary;
  // The next run starts on the current build (this one was pinned to the build it began on).
  return await makeContinueAsNewFunc<typeof connectionAdmissionWorkflow>({ initialVersioningBehavior: 'AUTO_UPGRADE' })({
    customerId: input.customerId,
    carried: end.next,
  });
}

/** Pinned per run (a few hundred grants): a deploy never replays a run under other window rules; the next run takes the current build. */
setWorkflowOptions({ versioningBehavior: 'PINNED' }, connectionAdmissionWorkflow);

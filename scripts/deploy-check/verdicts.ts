/**
 * What the deploy rehearsal concludes from each connection and retention timer: where each ran, whether
 * that is where it had to, and the one summary line. Pure: deploy-check.ts gathers, this judges.
 */

/** Which build a connection must end on: the one it started on (pinned), or either while v2 ramps. */
export type ExpectedBuild = 'v1' | 'v2' | 'either';

export interface ConnectionObservation {
  readonly workflowId: string;
  /** awaiting-answer, mid-poll, large, ramp, after, rollback, retention-source. */
  readonly stage: string;
  readonly expected: ExpectedBuild;
  /** Its final status, or 'Running' when it had not ended by the deadline. */
  readonly status: string;
  /** The build Temporal says it ran on (versioning info), as v1/v2, or the raw build id when neither. */
  readonly ranOn: string | undefined;
  /** Retrieved data checks that failed (an empty result, a missing product). */
  readonly problems: readonly string[];
}

export interface TimerObservation {
  readonly workflowId: string;
  readonly forgetAtBefore: string | undefined;
  readonly forgetAtAfter: string | undefined;
  readonly running: boolean;
  readonly ranOn: string | undefined;
}

export interface DeployCheckSummary {
  readonly connections: number;
  readonly completedAsExpected: number;
  readonly onV1: number;
  readonly onV2: number;
  readonly stuck: number;
  readonly nondeterminismErrors: number;
  readonly lostTimers: number;
}

export function connectionProblem(observation: ConnectionObservation): string | undefined {
  if (observation.status === 'Running') return 'still running at the deadline';
  if (observation.status !== 'Completed') return `ended ${observation.status}`;
  if (observation.expected !== 'either' && observation.ranOn !== observation.expected)
    return `ran on ${observation.ranOn ?? 'no recorded build'}, expected ${observation.expected}`;
  if (observation.expected === 'either' && observation.ranOn !== 'v1' && observation.ranOn !== 'v2')
    return `ran on ${observation.ranOn ?? 'no recorded build'}`;
  if (observation.problems.length > 0) return observation.problems.join('; ');
  return undefined;
}

/** A timer is lost when it ended, moved its due time, or did not move to the current build when woken. */
export function timerProblem(timer: TimerObservation, currentBuild: 'v1' | 'v2'): string | undefined {
  if (!timer.running) return 'no longer running';
  if (!timer.forgetAtBefore || timer.forgetAtBefore !== timer.forgetAtAfter)
    return `due time changed: ${timer.forgetAtBefore ?? 'none'} → ${timer.forgetAtAfter ?? 'none'}`;
  if (timer.ranOn !== currentBuild) return `still on ${timer.ranOn ?? 'no recorded build'} after a notice, expected ${currentBuild}`;
  return undefined;
}

export function summarize(connections: readonly ConnectionObservation[], nondeterminismErrors: number, lostTimers: number): DeployCheckSummary {
  return {
    connections: connections.length,
    completedAsExpected: connections.filter((observation) => connectionProblem(observation) === undefined).length,
    onV1: connections.filter((observation) => observation.ranOn === 'v1').length,
    onV2: connections.filter((observation) => observation.ranOn === 'v2').length,
    stuck: connections.filter((observation) => observation.status === 'Running').length,
    nondeterminismErrors,
    lostTimers,
  };
}

export function summaryLine(summary: DeployCheckSummary): string {
  return (
    `deploy-check: ${summary.connections} connections, ${summary.completedAsExpected} completed as expected, ${summary.onV1} on v1, ${summary.onV2} on v2, ` +
    `${summary.stuck} stuck, ${summary.nondeterminismErrors} nondeterminism errors, ${summary.lostTimers} lost timers`
  );
}

/** The run passes only when nothing is stuck, nothing failed replay, no timer was lost and every connection did what it had to. */
export function passed(summary: DeployCheckSummary): boolean {
  return summary.stuck === 0 && summary.nondeterminismErrors === 0 && summary.lostTimers === 0 && summary.completedAsExpected === summary.connections;
}

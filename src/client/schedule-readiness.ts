/**
 * Waiting for a schedule's scheduler to answer: until the scheduler workflow behind a schedule has
 * run its first workflow task, a describe (or an update, which describes first) is held or refused,
 * on a server that has just started. Apart from the schedules client because it is about the server's
 * readiness, the same for every call that reads a schedule.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { ServiceError, type Client } from '@temporalio/client';
import { grpcCodeOf, RefreshScheduleNotReadyError } from './errors.js';
import { transientCodeOf } from './transient-retry.js';
import { backoffMs } from '../retry/backoff.js';

const NOT_READY_BACKOFF = { firstMs: 200, maxMs: 2_000 };
const DEADLINE_SLACK_MS = 100;
/** gRPC codes (numbers fixed by the gRPC spec): FAILED_PRECONDITION is the server's WorkflowNotReady. */
const CANCELLED = 1;
const FAILED_PRECONDITION = 9;
/** WorkflowNotReady's messages for a query to a workflow that has not run (or keeps failing) its workflow task. */
const WORKFLOW_NOT_READY = /workflow task is not scheduled yet|workflow task in failed state|workflow state is not ready/i;

/**
 * The code of a refusal that says the schedule's scheduler has not answered yet, or undefined.
 * Until the scheduler's first workflow task has run, the server holds a describe's query and answers
 * DEADLINE_EXCEEDED when the call's deadline passes ("context deadline exceeded" after its own 30 s
 * without one), or refuses it as FAILED_PRECONDITION WorkflowNotReady; a server still starting may
 * also answer UNAVAILABLE or RESOURCE_EXHAUSTED.
 */
function notReadyCodeOf(error: unknown): string | undefined {
  const transient = transientCodeOf(error);
  if (transient !== undefined) return transient;
  const details = error instanceof ServiceError ? (error.cause as { details?: unknown } | undefined)?.details : undefined;
  return grpcCodeOf(error) === FAILED_PRECONDITION && typeof details === 'string' && WORKFLOW_NOT_READY.test(details) ? 'FAILED_PRECONDITION' : undefined;
}

/**
 * Runs `call` (a describe, or an update, which describes first) again while the schedule's
 * scheduler has not answered, until `waitMs` has passed: then RefreshScheduleNotReadyError.
 * The deadline bounds each call too, since the server holds a query to such a scheduler for 30 s.
 */
export async function whileNotReady<T>(client: Client, waitMs: number, scheduleId: string, call: () => Promise<T>): Promise<T> {
  const startedAt = Date.now();
  const deadline = startedAt + waitMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await client.connection.withDeadline(deadline, call);
    } catch (error) {
      // Our deadline ended the call; when the server's cancel of it arrives first, grpc-js says CANCELLED
      // (the server's deadline and ours are the same instant, measured on two clocks).
      const endedByDeadline = grpcCodeOf(error) === CANCELLED && Date.now() + DEADLINE_SLACK_MS >= deadline;
      const code = notReadyCodeOf(error) ?? (endedByDeadline ? 'DEADLINE_EXCEEDED' : undefined);
      if (code === undefined) throw error;
      const now = Date.now();
      if (now >= deadline) throw new RefreshScheduleNotReadyError(scheduleId, code, attempt, now - startedAt, { cause: error });
      await delay(Math.min(backoffMs(attempt, NOT_READY_BACKOFF), deadline - now));
    }
  }
}

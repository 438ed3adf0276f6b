/**
 * Validation of a connection's input, run as the workflow's first (local) activity. It lives here,
 * not in the workflow, to keep zod out of the workflow bundle: the SDK evaluates that bundle afresh
 * for every workflow it creates, so every kilobyte there costs CPU and memory per connection.
 * The result is recorded in history, so replays see the same normalized input.
 */
import { ApplicationFailure } from '@temporalio/common';
import { describeIssues } from '../aggregator/schemas.js';
import { ConnectionInput } from '../contract/connection-input.js';

export function createInputActivities() {
  return {
    /** Parses the raw input (defaults applied) or fails, non-retryably, naming each bad field. */
    // Async: activities return promises, and the worker awaits it like any other.
    // eslint-disable-next-line @typescript-eslint/require-await
    async validateConnectionInput(args: unknown): Promise<ConnectionInput> {
      const parsed = ConnectionInput.safeParse(args);
      if (!parsed.success) {
        throw ApplicationFailure.create({ type: 'InvalidConnectionInput', message: `invalid connection input: ${describeIssues(parsed.error)}`, nonRetryable: true });
      }
      return parsed.data;
    },
  };
}

export type InputActivities = ReturnType<typeof createInputActivities>;

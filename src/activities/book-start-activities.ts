/**
 * The book refresh starts its logins' connections itself (a local activity: a start is a call to
 * Temporal, never to the service, so it spends nothing of the request budget). Each connection is an
 * ordinary workflow, not a child: its result stays in its own history, and it tells the refresh how
 * it ended with a signal of a few bytes (src/workflows/window/connection-window-end.ts).
 *
 * One call starts a batch (the room the window just made), side by side. A start retried after it
 * went through (the worker died before the activity's result was recorded) must not read as a login
 * listed twice: each start carries its launch in the connection's memo, and a conflict is told apart
 * by reading it back.
 */
import { activityInfo } from '@temporalio/activity';
import type { Client, WorkflowExecutionStatusName } from '@temporalio/client';
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowIdConflictPolicy,
  WorkflowIdReusePolicy,
  WorkflowNotFoundError,
  type Priority,
} from '@temporalio/common';
import { BOOK_CONNECTION_MEMO } from '../contract/book/book-definitions.js';
import { CONNECTION_WORKFLOW_TYPE } from '../contract/connection/connection-definitions.js';
import type { ConnectionInputArgs } from '../contract/connection/connection-input.js';
import { connectionStartAttributes } from '../contract/search-attributes.js';

export interface BookConnectionStart {
  readonly workflowId: string;
  readonly input: ConnectionInputArgs;
  /** Unique per start of a refresh (`<refresh run id>:<n>`): read back on a conflict. */
  readonly launch: string;
  readonly summary: string;
}

export interface BookConnectionStarts {
  readonly starts: readonly BookConnectionStart[];
  /** The refresh's own priority (the scheduled class, the tenant's fairness key and weight). */
  readonly priority?: Priority | undefined;
}

/** How each start went: `startMs` is how long Temporal took to accept it (the window reads it as the fleet's load). */
export type BookConnectionStarted =
  | { readonly workflowId: string; readonly outcome: 'started'; readonly startMs: number }
  /** Its id was taken this night by another launch: the login was listed twice; not started again. */
  | { readonly workflowId: string; readonly outcome: 'duplicate' };

export function createBookStartActivities({ temporal }: { readonly temporal: Client }) {
  async function startOne(start: BookConnectionStart, priority: Priority | undefined, taskQueue: string): Promise<BookConnectionStarted> {
    const { workflowId, input, launch, summary } = start;
    const began = performance.now();
    try {
      await temporal.workflow.start(CONNECTION_WORKFLOW_TYPE, {
        taskQueue,
        workflowId,
        args: [input],
        // Running already: this launch's earlier attempt started it (a login listed twice in flight is caught by the refresh).
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
        // Closed already: one connection per login and night.
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        typedSearchAttributes: connectionStartAttributes(input),
        memo: { [BOOK_CONNECTION_MEMO.launch]: launch },
        ...(priority ? { priority } : {}),
        staticSummary: summary,
      });
      return { workflowId, outcome: 'started', startMs: Math.round(performance.now() - began) };
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
      // Closed already: ours if this launch started it (it ended before the retry), else a duplicate.
      const described = await temporal.workflow.getHandle(workflowId).describe();
      const ours = described.memo?.[BOOK_CONNECTION_MEMO.launch] === launch;
      return ours ? { workflowId, outcome: 'started', startMs: Math.round(performance.now() - began) } : { workflowId, outcome: 'duplicate' };
    }
  }

  return {
    /** Starts the batch side by side; a start that fails for another reason fails the call (it is retried, and safe to retry). */
    async startBookConnections({ starts, priority }: BookConnectionStarts): Promise<BookConnectionStarted[]> {
      const { taskQueue } = activityInfo();
      return await Promise.all(starts.map((start) => startOne(start, priority, taskQueue)));
    },

    /**
     * How the connections that have not told the refresh their end stand in Temporal (the id's
     * current run): one closed without a word (terminated, timed out) never will.
     */
    async connectionsClosed({
      workflowIds,
    }: {
      readonly workflowIds: readonly string[];
    }): Promise<{ readonly workflowId: string; readonly status: WorkflowExecutionStatusName | 'NOT_FOUND'; readonly runId?: string }[]> {
      return await Promise.all(
        workflowIds.map(async (workflowId) => {
          try {
            const { status, runId } = await temporal.workflow.getHandle(workflowId).describe();
            return { workflowId, status: status.name, runId };
          } catch (error) {
            if (error instanceof WorkflowNotFoundError) return { workflowId, status: 'NOT_FOUND' };
            throw error;
          }
        }),
      );
    },
  };
}

export type BookStartActivities = ReturnType<typeof createBookStartActivities>;

/**
 * A connection tells the window that admitted it (its book's refresh, or its tenant's admission) how
 * it ended: a signal sent from a local activity in the connection's last workflow task. From workflow
 * code the signal would be a command whose result takes the connection another workflow task (five
 * events); from here it is one marker, and Temporal has recorded it in the window's history before
 * the connection closes (a signal a
 * closing workflow commands is dropped by the server, so it could not be fired and forgotten).
 */
import { WorkflowNotFoundError } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import { log } from '@temporalio/activity';
import { bookLoginEndedSignal, type BookLoginEnded } from '../contract/book/book-definitions.js';

export interface TellBookInput {
  readonly refreshWorkflowId: string;
  readonly end: BookLoginEnded;
}

export function createBookEndActivities({ temporal }: { readonly temporal: Client }) {
  return {
    /** Signals the window (its current run); one that has gone (ended, terminated by hand) is logged, never the connection's failure. */
    async tellBook({ refreshWorkflowId, end }: TellBookInput): Promise<'told' | 'refresh gone'> {
      try {
        await temporal.workflow.getHandle(refreshWorkflowId).signal(bookLoginEndedSignal, end);
        return 'told';
      } catch (error) {
        if (!(error instanceof WorkflowNotFoundError)) throw error;
        log.warn('the window that admitted this connection has gone (its book refresh or admission ended)', { refreshWorkflowId });
        return 'refresh gone';
      }
    },
  };
}

export type BookEndActivities = ReturnType<typeof createBookEndActivities>;

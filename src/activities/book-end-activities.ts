/**
 * A book's connection tells the refresh that started it how it ended: a signal sent from a local
 * activity in the connection's last workflow task. From workflow code the signal would be a command
 * whose result takes the connection another workflow task (five events); from here it is one marker,
 * and Temporal has recorded it in the refresh's history before the connection closes (a signal a
 * closing workflow commands is dropped by the server, so it could not be fired and forgotten).
 */
import { WorkflowNotFoundError } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import { log } from '@temporalio/activity';
import { bookLoginEndedSignal, type BookLoginEnded } from '../contract/book-definitions.js';

export interface TellBookInput {
  readonly refreshWorkflowId: string;
  readonly end: BookLoginEnded;
}

export function createBookEndActivities({ temporal }: { readonly temporal: Client }) {
  return {
    /** Signals the refresh (its current run); one that has gone (ended, terminated by hand) is logged, never the connection's failure. */
    async tellBook({ refreshWorkflowId, end }: TellBookInput): Promise<'told' | 'refresh gone'> {
      try {
        await temporal.workflow.getHandle(refreshWorkflowId).signal(bookLoginEndedSignal, end);
        return 'told';
      } catch (error) {
        if (!(error instanceof WorkflowNotFoundError)) throw error;
        log.warn('the book refresh that started this connection has gone', { refreshWorkflowId });
        return 'refresh gone';
      }
    },
  };
}

export type BookEndActivities = ReturnType<typeof createBookEndActivities>;

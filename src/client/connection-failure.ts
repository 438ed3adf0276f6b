/**
 * How the connection client says what Temporal threw about one connection: not found, already ended
 * (a rerun refused), or failed, read as ConnectionFailedError with the connection's failure type and
 * the service's code. Apart from the client because every call of it maps its errors the same way.
 */
import { ApplicationFailure, WorkflowExecutionAlreadyStartedError, WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { CONNECTION_FAILURE_TYPES } from '../contract/connection/connection-definitions.js';
import { ConnectionAlreadyEndedError, ConnectionFailedError, ConnectionNotFoundError } from './errors.js';
import type { ConnectionEndType } from './errors.js';
import { clientErrorOf, endedHow } from './temporal-errors.js';

const FAILURE_TYPES: ReadonlySet<string> = new Set(CONNECTION_FAILURE_TYPES);

/** The client's error for what a call about `workflowId` (undefined: about none, e.g. a listing) threw, at Temporal's `address`. */
export function connectionErrorOf(address: string | undefined, workflowId: string | undefined, error: unknown): Error {
  return clientErrorOf(error, address, (known) => {
    if (workflowId === undefined) return undefined;
    if (known instanceof WorkflowNotFoundError) return new ConnectionNotFoundError(workflowId, { cause: known });
    if (known instanceof WorkflowExecutionAlreadyStartedError) return new ConnectionAlreadyEndedError(workflowId, { cause: known });
    if (known instanceof WorkflowFailedError) return connectionFailed(workflowId, known);
    return undefined;
  });
}

/** Maps a workflow failure to ConnectionFailedError, reading the type and the service code. */
function connectionFailed(workflowId: string, error: WorkflowFailedError): ConnectionFailedError {
  const cause = error.cause;
  const how = endedHow(cause);
  // A failure type the connection does not fail with (another workflow's, or none) reads as Unknown.
  const type = (cause instanceof ApplicationFailure && !FAILURE_TYPES.has(how) ? 'Unknown' : how) as ConnectionEndType;
  const serviceCode = cause instanceof ApplicationFailure ? serviceCodeOf(cause.details) : undefined;
  return new ConnectionFailedError(workflowId, type, cause?.message ?? error.message, serviceCode, { cause: error });
}

/** The first `serviceCode` (or `ServiceCode`) found in an ApplicationFailure's details, or a bare code string. */
export function serviceCodeOf(details: readonly unknown[] | undefined | null): string | undefined {
  for (const detail of details ?? []) {
    if (typeof detail === 'string' && /^[A-Z][A-Z0-9_]+$/.test(detail)) return detail;
    if (typeof detail === 'object' && detail !== null) {
      const record = detail as Record<string, unknown>;
      const code = record.serviceCode ?? record.ServiceCode;
      if (typeof code === 'string' && code !== '') return code;
    }
  }
  return undefined;
}

/**
 * The pipeline entry's refusals: what its handlers and the pipeline client throw, as a status and a
 * code a pipeline can branch on (`{ error, message }`, as the console answers). A failure that is not
 * the caller's is not described to it (it may name the product's internals): the log says it.
 */
import { AuditUnavailableError } from '../audit/audit-store.js';
import {
  ConnectionAlreadyEndedError,
  ConnectionNotFoundError,
  InvalidBusinessKeyError,
  InvalidConnectionInputError,
  ResultClaimRefusedError,
  TemporalUnavailableError,
} from '../client/errors.js';
import { HttpError } from '../http/json-http.js';

/** What handlers throw, as a status and a code a pipeline can branch on. */
export function toHttpError(error: unknown, log: (line: string) => void = () => undefined): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof InvalidConnectionInputError || error instanceof InvalidBusinessKeyError) return new HttpError(400, 'InvalidRequest', error.message);
  if (error instanceof ConnectionNotFoundError) return new HttpError(404, 'ConnectionNotFound', error.message);
  if (error instanceof ConnectionAlreadyEndedError) return new HttpError(409, 'ConnectionAlreadyEnded', error.message, { workflowId: error.workflowId });
  if (error instanceof ResultClaimRefusedError) {
    switch (error.reason) {
      case 'wrong-token':
        return new HttpError(401, 'WrongToken', `the token is not this result's: ${error.problem}`);
      case 'claimed':
        return new HttpError(410, 'ResultClaimed', `the result was claimed already (a reference is good for one claim): ${error.problem}`);
      case 'expired':
        return new HttpError(410, 'ResultExpired', `the reference has expired: ${error.problem}`);
      case 'unknown':
        return new HttpError(404, 'ResultNotFound', error.message);
    }
  }
  if (error instanceof AuditUnavailableError) return new HttpError(503, 'AuditUnavailable', error.message);
  if (error instanceof TemporalUnavailableError) {
    log(`pipeline-entry: ${error.message}`);
    return new HttpError(503, 'TemporalUnavailable', 'the connections service cannot be reached now; try again');
  }
  // Not said to the pipeline (it may name the product's internals); said on the log.
  log(`pipeline-entry: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  return new HttpError(500, 'InternalError', 'the request failed inside the entry; its log says why');
}

/**
 * What an error thrown by a console route becomes on the wire: each typed error of the client, the
 * codec and the audit trail as its HTTP status and code (with the fields a caller acts on), anything
 * else a 502 TemporalError. One table, so every route answers the same error the same way.
 */
import { PayloadDecryptionError } from '../codec/encryption-codec.js';
import { KeyDestroyedError, KeyVersionRevokedError, PayloadNotSealedError, TenantKeyMissingError } from '../codec/payload-errors.js';
import {
  AnswerRejectedError,
  BookEntryNotFoundError,
  BookRefreshNotFoundError,
  BookRefreshRefusedError,
  BookReportNotReadyError,
  ConnectionNotFoundError,
  ForgetFailedError,
  InvalidBookRequestError,
  InvalidBusinessKeyError,
  InvalidConnectionInputError,
  InvalidLoginRefError,
  InvalidScheduleError,
  RefreshNotUnattendedError,
  RefreshScheduleNotFoundError,
  RefreshScheduleNotReadyError,
} from '../client/errors.js';
import { AuditRecordInvalidError, AuditUnavailableError } from '../audit/audit-store.js';
import { HttpError } from '../http/json-http.js';

export /** What handlers throw, as the status and code the page and the Web UI read. */
function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof AnswerRejectedError) {
    return new HttpError(422, 'AnswerRejected', error.problem, { source: error.source, challengeSetId: error.challengeSetId });
  }
  if (error instanceof ConnectionNotFoundError) return new HttpError(404, 'ConnectionNotFound', error.message);
  if (error instanceof AuditUnavailableError) return new HttpError(503, 'AuditUnavailable', error.message);
  if (error instanceof AuditRecordInvalidError)
    return new HttpError(500, 'AuditRecordInvalid', error.message, { where: error.where, position: error.position });
  if (error instanceof KeyVersionRevokedError)
    return new HttpError(422, 'KeyVersionRevoked', error.message, { keyId: error.keyId, keyName: error.keyName, version: error.version });
  if (error instanceof PayloadNotSealedError) return new HttpError(422, 'PayloadNotSealed', error.message, { encoding: error.encoding });
  if (error instanceof KeyDestroyedError)
    return new HttpError(422, 'KeyDestroyed', error.message, {
      keyId: error.keyId,
      keyName: error.keyName,
      ...(error.tenant === undefined ? {} : { tenant: error.tenant }),
    });
  if (error instanceof PayloadDecryptionError) return new HttpError(422, 'DecryptionFailed', error.message, { keyId: error.keyId });
  if (error instanceof TenantKeyMissingError) return new HttpError(422, 'TenantKeyMissing', error.message, { tenant: error.tenant });
  if (error instanceof InvalidConnectionInputError || error instanceof InvalidBusinessKeyError) return new HttpError(400, 'InvalidRequest', error.message);
  if (error instanceof InvalidScheduleError || error instanceof InvalidLoginRefError) return new HttpError(400, 'InvalidRequest', error.message);
  if (error instanceof RefreshScheduleNotFoundError) return new HttpError(404, 'ScheduleNotFound', error.message);
  if (error instanceof RefreshScheduleNotReadyError) return new HttpError(503, 'ScheduleNotReady', error.message, { scheduleId: error.scheduleId });
  if (error instanceof RefreshNotUnattendedError) return new HttpError(409, 'RefreshNotUnattended', error.message, { challengeType: error.challengeType });
  if (error instanceof ForgetFailedError) return new HttpError(409, 'ForgetFailed', error.message, { type: error.type, workflowId: error.workflowId });
  if (error instanceof InvalidBookRequestError) return new HttpError(400, 'InvalidRequest', error.message);
  if (error instanceof BookRefreshNotFoundError || error instanceof BookEntryNotFoundError) return new HttpError(404, 'BookNotFound', error.message);
  if (error instanceof BookRefreshRefusedError)
    return new HttpError(409, 'BookRefreshRefused', error.message, { request: error.request, reason: error.reason });
  if (error instanceof BookReportNotReadyError) return new HttpError(409, 'ReportNotReady', error.message);
  return new HttpError(502, 'TemporalError', error instanceof Error ? error.message : String(error));
}

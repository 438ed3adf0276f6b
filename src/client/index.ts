/** The pipeline's entry point: `import { ConnectionsClient, connectionKey } from '.../client/index.js'`. */
export { ConnectionsClient, isTerminalStatus } from './connections.js';
export type { EnrolOnResult } from './connections.js';
export type { ConnectionsClientOptions, ConnectOptions } from './connection-client-options.js';
export type { ConnectionRef, FirstStepResult, RerunPolicy, StartOptions } from './connection-start.js';
export type { AnswerInput, AnswerOptions } from './answer-check.js';
export { ListFilter, visibilityQuery } from './connection-listing.js';
export { serviceCodeOf } from './connection-failure.js';
export { quoteVisibilityValue } from './visibility.js';
export type { ConnectionSummary } from './connection-summary.js';
export { BusinessKey, connectionKey, parseBusinessKey } from './business-key.js';
export { RefreshSchedules } from './schedules.js';
export type { EndUserFlag, LatestRefresh, ListSchedulesFilter, LoginRef, RefreshSchedulesOptions, ScheduledRefresh } from './schedules.js';
export type { RefreshScheduleSummary } from './login-schedule.js';
export { RefreshScheduleInput, formatCadenceDuration } from './refresh-schedule-input.js';
export type { RefreshCadenceArgs, RefreshScheduleArgs } from './refresh-schedule-input.js';
export { LoginsClient } from './logins.js';
export { BooksClient } from './books.js';
export type { BooksClientOptions } from './books.js';
export type { BookEntrySummary, BookPageOfEntries } from './book-entries.js';
export type { BookRefreshSummary } from './book-refresh-runs.js';
export type { BookScheduleSummary } from './book-schedule.js';
export type { MigrationOutcome } from './book-migration.js';
export type { BookEnrolmentArgs, BookListArgs, BookRefArgs, BookScheduleArgs, ResizeArgs } from './book-input.js';
export type { BookCounts, BookOutcome, BookOutcomeKind, BookProgress, BookReport, BookReportPage } from '../contract/book/book-definitions.js';
export type { WindowBounds, WindowChange, WindowView } from '../contract/window/window-definitions.js';
export type { ForgetOptions, ForgetRecordSummary, LoginsClientOptions } from './logins.js';
export { forgetWorkflowId, refreshScheduleId, retentionWorkflowId } from '../contract/login-keys.js';
export {
  AnswerRejectedError,
  BookEntryNotFoundError,
  BookRefreshNotFoundError,
  BookRefreshRefusedError,
  BookReportNotReadyError,
  ConnectionAlreadyEndedError,
  ConnectionClientError,
  ConnectionFailedError,
  ConnectionHeldError,
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
  ResultWaitFailedError,
  TemporalAccessDeniedError,
  TemporalUnavailableError,
} from './errors.js';
export type { TransientRetry, TransientRetryOptions } from './transient-retry.js';
export type { ConnectionEndType } from './errors.js';
export { loadClientConfig } from '../settings/client.js';
/** For a pipeline that builds its own Client: `interceptors: { workflow: [new ConnectionTracingInterceptor(connection.workflowService, namespace)] }`. */
export { ConnectionTracingInterceptor } from '../tracing/client-tracing.js';
export type { ClientConfig } from '../settings/client.js';
export type { ConnectionInputArgs } from '../contract/connection/connection-input.js';
export type {
  AnswerOutcome,
  ChallengeSet,
  ConnectionFailureType,
  ConnectionResult,
  ConnectionState,
  ConnectionStatus,
  FirstStep,
  PendingOperation,
  Rejection,
} from '../contract/connection/connection-definitions.js';
export type { ForgetRecord, ForgetState, ForgetTiming, ForgetTrigger, PayloadsForgotten } from '../contract/retention/forget-definitions.js';
export type { RetentionOutcome, RetentionState } from '../contract/retention/retention-definitions.js';
export type { SecurityChallenge, SecurityResponses } from '../aggregator/schemas.js';
export type { ApiKeyFileLog } from '../temporal/api-key-file.js';

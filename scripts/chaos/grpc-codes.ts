/**
 * Why a Temporal call failed, by name: the gRPC status code under whatever the SDK or the pipeline
 * client wrapped it in. Every query failure looks alike from outside (a ServiceError, or a
 * TemporalUnavailableError around one): only the code tells "the workflow task is failing"
 * (FAILED_PRECONDITION) from "no worker answered in time" (DEADLINE_EXCEEDED), "a query is already
 * buffered" (RESOURCE_EXHAUSTED) or "the server is restarting" (UNAVAILABLE).
 */
import { isGrpcServiceError, QueryNotRegisteredError, QueryRejectedError, WorkflowNotFoundError } from '@temporalio/client';

/** The gRPC status codes, fixed by the gRPC spec (grpc/doc/statuscodes.md). */
const GRPC_CODE_NAMES: readonly string[] = [
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
];

/** "FAILED_PRECONDITION" for 9; "GRPC_<n>" for a number outside the spec (never a bare number: counts are keyed by name). */
export function grpcCodeName(code: number): string {
  return GRPC_CODE_NAMES[code] ?? `GRPC_${code}`;
}

/** Errors are wrapped at most this deep here (pipeline client → SDK ServiceError → gRPC error). */
const MAX_CAUSE_DEPTH = 6;

/**
 * The name to count a failed call under: the gRPC code found down the `cause` chain; else the
 * SDK's own refusals without one (a query rejected by status, a workflow not found); else the
 * outermost error's class name, so nothing is counted as a number or lost.
 */
export function failureCodeOf(error: unknown): string {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < MAX_CAUSE_DEPTH; current = current.cause, depth++) {
    // QueryNotRegisteredError carries the code itself but is no gRPC error object.
    if (current instanceof QueryNotRegisteredError && typeof current.code === 'number') return grpcCodeName(current.code);
    if (isGrpcServiceError(current) && typeof current.code === 'number') return grpcCodeName(current.code);
    if (current instanceof QueryRejectedError) return 'QUERY_REJECTED';
    if (current instanceof WorkflowNotFoundError) return 'NOT_FOUND';
  }
  return error instanceof Error ? error.name : typeof error;
}

export function countCode(counts: Map<string, number>, code: string): void {
  counts.set(code, (counts.get(code) ?? 0) + 1);
}

/** Adds every count of `from` into `into`. */
export function addCounts(into: Map<string, number>, from: ReadonlyMap<string, number>): void {
  for (const [code, count] of from) into.set(code, (into.get(code) ?? 0) + count);
}

/** Most frequent first, then by name: "UNAVAILABLE 3, DEADLINE_EXCEEDED 1"; "none" when empty. */
export function formatCodeCounts(counts: ReadonlyMap<string, number>, times = ''): string {
  const entries = [...counts].filter(([, count]) => count > 0).sort(([a, x], [b, y]) => y - x || a.localeCompare(b));
  return entries.length === 0 ? 'none' : entries.map(([code, count]) => `${code} ${times}${count}`).join(', ');
}

/**
 * The checks an endpoint of client.ts makes on its caller's input before anything is sent: a body
 * against its request schema, an id against the Uuid a path segment must be. A failure is an
 * AggregatorRequestError (the caller's mistake, never retried) and no request leaves.
 */
import type { z } from 'zod';
import { Uuid } from './schemas.js';
import { parseOrRefuse } from '../validation/parse-or-refuse.js';
import { AggregatorRequestError } from './errors.js';

export function validated<T>(schema: z.ZodType<T>, value: unknown, operation: string): T {
  return parseOrRefuse(schema, value, (problem) => new AggregatorRequestError(operation, problem));
}

/** A Uuid as a path segment, encoded. */
export function pathId(value: string, field: string, operation: string): string {
  return encodeURIComponent(validated(Uuid, value, `${operation} ${field}`));
}

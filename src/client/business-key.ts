/**
 * Business keys: the workflow id of a connection, chosen by the pipeline so that starting the same
 * connection twice finds the first one. Format: `connection-<customerId>:<applicationId>`. The `:`
 * cannot occur in either part, so two tenants can never produce the same key (with `-` between them,
 * `demo` + `lender-app1` and `demo-lender` + `app1` would collide).
 */
import { z } from 'zod';
import { InvalidBusinessKeyError } from './errors.js';
import { ID_SEGMENT_MAX, ID_SEGMENT_PATTERN, ID_SEGMENT_RULE, ID_SEGMENT_SOURCE } from '../contract/ids.js';
import { reservedTenantProblem } from '../contract/workflow-tenant.js';

/** What every connection's workflow id (business key) begins with. */
export const CONNECTION_WORKFLOW_ID_PREFIX = 'connection-';

/** Letters, digits, `.`, `_`, `-`; starts with a letter or digit; at most 64 characters. */
export const KeySegment = z
  .string()
  .min(1, { message: 'must not be empty' })
  .max(ID_SEGMENT_MAX, { message: `must be at most ${ID_SEGMENT_MAX} characters` })
  .regex(ID_SEGMENT_PATTERN, { message: ID_SEGMENT_RULE });

/**
 * A tenant's customer id where the product builds its book ids from it: a key segment that does not
 * begin with a reserved prefix (`book-entry-<c>:` must name tenant <c>'s entry, never a book of tenant
 * `entry-<c>`; src/contract/workflow-tenant.ts).
 */
export const TenantSegment = KeySegment.superRefine((customerId, ctx) => {
  const problem = reservedTenantProblem(customerId);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

export const BusinessKey = z
  .string()
  .max(200, { message: 'must be at most 200 characters' })
  .regex(new RegExp(`^${CONNECTION_WORKFLOW_ID_PREFIX}${ID_SEGMENT_SOURCE}:${ID_SEGMENT_SOURCE}$`), {
    message: `must look like ${CONNECTION_WORKFLOW_ID_PREFIX}<customerId>:<applicationId> (each ${ID_SEGMENT_RULE.replace(/^must /, '')})`,
  });
export type BusinessKey = z.infer<typeof BusinessKey>;

/** Any existing workflow id the tools may be pointed at (they also accept ids not made here). */
export const WorkflowId = z
  .string()
  .min(1, { message: 'must not be empty' })
  .max(1000, { message: 'must be at most 1000 characters' })
  .regex(/^[^\s\p{Cc}]+$/u, { message: 'must not contain spaces or control characters' });

/** `connection-demo-lender:app-123` for customer `demo-lender` and application `app-123`. */
export function connectionKey(customerId: string, applicationId: string): BusinessKey {
  for (const [name, value] of [
    ['customerId', customerId],
    ['applicationId', applicationId],
  ] as const) {
    const parsed = KeySegment.safeParse(value);
    if (!parsed.success)
      throw new InvalidBusinessKeyError(
        `${CONNECTION_WORKFLOW_ID_PREFIX}${customerId}:${applicationId}`,
        `${name} ${parsed.error.issues[0]?.message ?? 'is invalid'}`,
      );
  }
  return `${CONNECTION_WORKFLOW_ID_PREFIX}${customerId}:${applicationId}`;
}

/** Checks the key's format and that it belongs to the customer whose connection it names. */
export function parseBusinessKey(key: string, customerId: string): BusinessKey {
  const parsed = BusinessKey.safeParse(key);
  if (!parsed.success) throw new InvalidBusinessKeyError(key, parsed.error.issues[0]?.message ?? 'is invalid');
  if (!key.startsWith(`${CONNECTION_WORKFLOW_ID_PREFIX}${customerId}:`)) {
    throw new InvalidBusinessKeyError(
      key,
      `must start with "${CONNECTION_WORKFLOW_ID_PREFIX}${customerId}:" (the input's customerId) followed by the application id`,
    );
  }
  return parsed.data;
}

export function parseWorkflowId(id: string): string {
  const parsed = WorkflowId.safeParse(id);
  if (!parsed.success) throw new InvalidBusinessKeyError(id, parsed.error.issues[0]?.message ?? 'is invalid');
  return parsed.data;
}

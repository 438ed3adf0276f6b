/**
 * Shared sections `priority` (task-queue priority keys by who waits, tenants' fairness weights:
 * src/contract/priority.ts), `budget` (the fleet's request budget: src/budget/) and `books` (the book
 * refresh's window and page size).
 */
import { z } from 'zod';
import { DEFAULT_PRIORITY_KEYS, FAIRNESS_WEIGHT_LIMITS, PRIORITY_KEY_LIMITS, type PriorityPolicy } from '../contract/priority.js';
import { BOOK_PAGE_SIZE_LIMITS, DEFAULT_BOOK_PAGE_SIZE } from '../contract/book/book-definitions.js';
import { DEFAULT_WINDOW_BOUNDS, WINDOW_LIMITS } from '../contract/window/window-definitions.js';
import { doc, group } from './document.js';
import { perTenantList } from './per-tenant-list.js';

const PriorityKey = z.coerce
  .number({ message: 'must be an integer from 1 (first) to 5 (last)' })
  .int({ message: 'must be an integer from 1 (first) to 5 (last)' })
  .min(PRIORITY_KEY_LIMITS.min, { message: 'must be an integer from 1 (first) to 5 (last)' })
  .max(PRIORITY_KEY_LIMITS.max, { message: 'must be an integer from 1 (first) to 5 (last)' });
const WEIGHT_RULE = `must be a comma-separated list of <customerId>:<weight> (or *:<weight> for every other tenant), weights from ${FAIRNESS_WEIGHT_LIMITS.min} to ${FAIRNESS_WEIGHT_LIMITS.max}`;
/** `lender-a:3,*:1` → fairness weight per customer id ('*': any other tenant; 1 where neither is set). */
const TenantWeights = perTenantList('\\d+(?:\\.\\d+)?', (value) => value >= FAIRNESS_WEIGHT_LIMITS.min && value <= FAIRNESS_WEIGHT_LIMITS.max, WEIGHT_RULE);

export const PriorityVars = group(
  z.object({
    PRIORITY_LIVE: doc(PriorityKey.default(DEFAULT_PRIORITY_KEYS.live), 'Priority key of a connection an end user waits on, answering challenges.'),
    PRIORITY_PIPELINE: doc(PriorityKey.default(DEFAULT_PRIORITY_KEYS.pipeline), "Priority key of a pipeline's cached retrieval."),
    PRIORITY_SCHEDULED: doc(PriorityKey.default(DEFAULT_PRIORITY_KEYS.scheduled), 'Priority key of an unattended scheduled refresh.'),
    PRIORITY_MAINTENANCE: doc(PriorityKey.default(DEFAULT_PRIORITY_KEYS.maintenance), 'Priority key of forget and retention.'),
    TENANT_WEIGHTS: doc(
      TenantWeights.default(new Map()),
      `Fairness weights of the tenants sharing the fleet: <customerId>:<weight>, comma-separated, *:<weight> for every other tenant, weights ${FAIRNESS_WEIGHT_LIMITS.min}..${FAIRNESS_WEIGHT_LIMITS.max}. A tenant of weight 3 gets three times the dispatches of a tenant of weight 1 when both have work waiting, and three times the tenant budget.`,
      { defaultText: 'every tenant 1' },
    ),
  }),
  'Priority and fairness',
  "Task Queue priority keys by who waits, 1 served first, 5 last (activities inherit their connection's; a start may override it: StartOptions.priority), and the tenants' fairness weights (docs/fleet.md).",
);

const Rps = z.coerce
  .number({ message: 'must be a number of requests per second, from 0.1 to 100000' })
  .min(0.1, { message: 'must be a number of requests per second, from 0.1 to 100000' })
  .max(100_000, { message: 'must be a number of requests per second, from 0.1 to 100000' });

const Burst = z.coerce
  .number({ message: 'must be a number of requests, from 1 to 100000' })
  .min(1, { message: 'must be a number of requests, from 1 to 100000' })
  .max(100_000, { message: 'must be a number of requests, from 1 to 100000' });

export const BudgetVars = group(
  z.object({
    SERVICE_BUDGET_RPS: doc(
      Rps.optional(),
      'Requests a second the whole fleet may send the service (every tenant together), held by Temporal on the task queue across all workers; each worker sets it at start.',
      { defaultText: 'no budget' },
    ),
    SERVICE_BUDGET_TENANT_RPS: doc(
      Rps.optional(),
      'Requests a second one tenant of weight 1 may send (times its TENANT_WEIGHTS weight); at most SERVICE_BUDGET_RPS.',
      { defaultText: 'SERVICE_BUDGET_RPS' },
    ),
    SERVICE_BUDGET_MODE: doc(
      z.enum(['bucket', 'strict'], { error: 'must be bucket or strict' }).default('bucket'),
      "How the service counts: bucket, a token bucket of SERVICE_BUDGET_RPS a second taking up to SERVICE_BUDGET_BURST at once (the fleet averages (burst - 1) / 1.05 of it, 90% of a budget of 20 with the default burst); strict, at most SERVICE_BUDGET_RPS in any whole second (the fleet averages about half of it, to absorb Temporal's one-second burst).",
    ),
    SERVICE_BUDGET_BURST: doc(
      Burst.optional(),
      'Requests the service takes from the fleet at once (the size of its bucket), in bucket mode only; each tenant gets the same share of it as of the rate.',
      { defaultText: "SERVICE_BUDGET_RPS (one second's worth)" },
    ),
  }),
  'Request budget',
  "The fleet's request budget toward the aggregation service (docs/fleet.md).",
);

/** The fleet's request budget (src/budget/fleet-budget.ts), or undefined when none is configured. */
export function budgetSection(env: z.output<typeof BudgetVars>, ctx: z.core.$RefinementCtx) {
  if (env.SERVICE_BUDGET_MODE === 'strict' && env.SERVICE_BUDGET_BURST !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['SERVICE_BUDGET_BURST'], message: 'applies to SERVICE_BUDGET_MODE=bucket only (a strict service takes no burst)' });
  }
  if (env.SERVICE_BUDGET_RPS === undefined) {
    for (const name of ['SERVICE_BUDGET_TENANT_RPS', 'SERVICE_BUDGET_BURST'] as const) {
      if (env[name] !== undefined) ctx.addIssue({ code: 'custom', path: [name], message: "needs SERVICE_BUDGET_RPS (the whole fleet's budget) too" });
    }
    return undefined;
  }
  const tenantRps = env.SERVICE_BUDGET_TENANT_RPS ?? env.SERVICE_BUDGET_RPS;
  if (tenantRps > env.SERVICE_BUDGET_RPS)
    ctx.addIssue({ code: 'custom', path: ['SERVICE_BUDGET_TENANT_RPS'], message: `must not exceed SERVICE_BUDGET_RPS (${env.SERVICE_BUDGET_RPS})` });
  if (env.SERVICE_BUDGET_MODE === 'strict') return Object.freeze({ totalRps: env.SERVICE_BUDGET_RPS, tenantRps, mode: 'strict' as const });
  return Object.freeze({ totalRps: env.SERVICE_BUDGET_RPS, tenantRps, mode: 'bucket' as const, burst: env.SERVICE_BUDGET_BURST ?? env.SERVICE_BUDGET_RPS });
}

const WindowSize = z.coerce
  .number({ message: `must be a whole number from ${WINDOW_LIMITS.min} to ${WINDOW_LIMITS.max}` })
  .int({ message: `must be a whole number from ${WINDOW_LIMITS.min} to ${WINDOW_LIMITS.max}` })
  .min(WINDOW_LIMITS.min, { message: `must be a whole number from ${WINDOW_LIMITS.min} to ${WINDOW_LIMITS.max}` })
  .max(WINDOW_LIMITS.max, { message: `must be a whole number from ${WINDOW_LIMITS.min} to ${WINDOW_LIMITS.max}` });

export const BookVars = group(
  z.object({
    BOOK_WINDOW_FLOOR: doc(
      WindowSize.default(DEFAULT_WINDOW_BOUNDS.floor),
      'Fewest connections a book refresh keeps in flight (while the book has more), however slow the fleet or the service.',
    ),
    BOOK_WINDOW_CEILING: doc(
      WindowSize.default(DEFAULT_WINDOW_BOUNDS.ceiling),
      'Most connections a book refresh keeps in flight, however fast children finish.',
    ),
    BOOK_WINDOW_START: doc(
      WindowSize.default(DEFAULT_WINDOW_BOUNDS.start),
      'Connections in flight when a book refresh begins; the window grows or shrinks from there.',
    ),
    BOOK_PAGE_SIZE: doc(
      z.coerce
        .number()
        .int()
        .min(BOOK_PAGE_SIZE_LIMITS.min, { message: `must be a whole number from ${BOOK_PAGE_SIZE_LIMITS.min} to ${BOOK_PAGE_SIZE_LIMITS.max}` })
        .max(BOOK_PAGE_SIZE_LIMITS.max, { message: `must be a whole number from ${BOOK_PAGE_SIZE_LIMITS.min} to ${BOOK_PAGE_SIZE_LIMITS.max}` })
        .default(DEFAULT_BOOK_PAGE_SIZE),
      'Logins a book refresh reads, starts and drains per run before it continues as new (one report page each).',
    ),
  }),
  'Book refresh',
  "The window and page size of book refreshes whose Schedule or run names none; written into each book's Schedule when it is created (docs/fleet.md).",
);

/** The book refresh's defaults, checked as a whole (floor ≤ start ≤ ceiling). */
export function bookSection(env: z.output<typeof BookVars>, ctx: z.core.$RefinementCtx) {
  if (env.BOOK_WINDOW_FLOOR > env.BOOK_WINDOW_CEILING)
    ctx.addIssue({ code: 'custom', path: ['BOOK_WINDOW_FLOOR'], message: `must not exceed BOOK_WINDOW_CEILING (${env.BOOK_WINDOW_CEILING})` });
  if (env.BOOK_WINDOW_START < env.BOOK_WINDOW_FLOOR || env.BOOK_WINDOW_START > env.BOOK_WINDOW_CEILING) {
    ctx.addIssue({
      code: 'custom',
      path: ['BOOK_WINDOW_START'],
      message: `must be from BOOK_WINDOW_FLOOR (${env.BOOK_WINDOW_FLOOR}) to BOOK_WINDOW_CEILING (${env.BOOK_WINDOW_CEILING})`,
    });
  }
  return Object.freeze({
    window: Object.freeze({ floor: env.BOOK_WINDOW_FLOOR, ceiling: env.BOOK_WINDOW_CEILING, start: env.BOOK_WINDOW_START }),
    pageSize: env.BOOK_PAGE_SIZE,
  });
}

export function prioritySection(env: z.output<typeof PriorityVars>): PriorityPolicy {
  return Object.freeze({
    keys: Object.freeze({ live: env.PRIORITY_LIVE, pipeline: env.PRIORITY_PIPELINE, scheduled: env.PRIORITY_SCHEDULED, maintenance: env.PRIORITY_MAINTENANCE }),
    tenantWeights: env.TENANT_WEIGHTS,
  });
}

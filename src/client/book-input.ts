/**
 * What the pipeline asks of a tenant's book, checked before anything reaches Temporal, each problem
 * named by its field: an enrolment (the login, its cadence, session and products), a book's Schedule
 * (tenant, cadence, when, the window's bounds and the page size), and an operator's resize.
 */
import { z } from 'zod';
import { Uuid } from '../aggregator/schemas.js';
import { BOOK_PAGE_SIZE_LIMITS, DEFAULT_BOOK_CADENCE } from '../contract/book/book-definitions.js';
import { WINDOW_LIMITS } from '../contract/window/window-definitions.js';
import { ProductsInput, TimingInput } from '../contract/connection/connection-input.js';
import { CADENCE_PATTERN, CADENCE_RULE } from '../contract/ids.js';
import { TenantSegment } from './business-key.js';
import { RefreshCadence } from './refresh-schedule-input.js';

/** `nightly`, `weekly`, `hourly-eu`: a name of the tenant's choosing, one Schedule per name. */
export const CadenceName = z.string().trim().regex(CADENCE_PATTERN, { message: CADENCE_RULE });

const LoginId = z.string().trim().min(1, { message: 'must not be empty' }).pipe(Uuid);

export const BookEnrolmentInput = z.strictObject({
  customerId: TenantSegment,
  loginId: LoginId,
  cadence: CadenceName.default(DEFAULT_BOOK_CADENCE),
  /** What each refresh opens: the saved data (`cached`, default) or a live refresh at the institution (`refresh`). */
  session: z.enum(['cached', 'refresh']).default('cached'),
  products: ProductsInput,
  timing: TimingInput.partial().optional(),
});
export type BookEnrolmentArgs = z.input<typeof BookEnrolmentInput>;

const WINDOW_RULE = `must be a whole number from ${WINDOW_LIMITS.min} to ${WINDOW_LIMITS.max}`;
const WindowSize = z
  .number({ message: WINDOW_RULE })
  .int({ message: WINDOW_RULE })
  .min(WINDOW_LIMITS.min, { message: WINDOW_RULE })
  .max(WINDOW_LIMITS.max, { message: WINDOW_RULE });

const PAGE_SIZE_RULE = `must be a whole number from ${BOOK_PAGE_SIZE_LIMITS.min} to ${BOOK_PAGE_SIZE_LIMITS.max}`;
/** Logins a refresh reads and drains per run, each problem named. */
export const BookPageSize = z
  .number({ message: PAGE_SIZE_RULE })
  .int({ message: PAGE_SIZE_RULE })
  .min(BOOK_PAGE_SIZE_LIMITS.min, { message: PAGE_SIZE_RULE })
  .max(BOOK_PAGE_SIZE_LIMITS.max, { message: PAGE_SIZE_RULE });

export const WindowBoundsInput = z
  .strictObject({ floor: WindowSize.optional(), ceiling: WindowSize.optional(), start: WindowSize.optional() })
  .refine((bounds) => bounds.floor === undefined || bounds.ceiling === undefined || bounds.floor <= bounds.ceiling, {
    message: 'floor must be at most ceiling',
  });

export const BookScheduleInput = z.strictObject({
  customerId: TenantSegment,
  cadence: CadenceName.default(DEFAULT_BOOK_CADENCE),
  /** When the book refreshes: `{ kind: 'daily', at: '02:00', timeZone, jitter }` or `{ kind: 'interval', every: '6h' }`. */
  when: RefreshCadence,
  window: WindowBoundsInput.optional(),
  pageSize: BookPageSize.optional(),
  paused: z.boolean().default(false),
  note: z.string().trim().max(500).optional(),
});
export type BookScheduleArgs = z.input<typeof BookScheduleInput>;

export const BookRef = z.strictObject({ customerId: TenantSegment, cadence: CadenceName.default(DEFAULT_BOOK_CADENCE) });
export type BookRefArgs = z.input<typeof BookRef>;

export const BookListInput = z.strictObject({
  customerId: TenantSegment,
  cadence: CadenceName.optional(),
  /** true: only logins flagged as needing their end user; false: only those that refresh. */
  needsEndUser: z.boolean().optional(),
  /** Entries per page (default 100, at most 1000). */
  pageSize: z.number().int().min(1).max(1000).optional(),
  /** The `nextPageToken` of the previous page. */
  pageToken: z.string().max(10_000).optional(),
});
export type BookListArgs = z.input<typeof BookListInput>;

export const ResizeInput = z.union([z.strictObject({ size: WindowSize }), z.strictObject({ unpin: z.literal(true) })], {
  error: () => `must be { size: ${WINDOW_LIMITS.min}..${WINDOW_LIMITS.max} } or { unpin: true }`,
});
export type ResizeArgs = z.input<typeof ResizeInput>;

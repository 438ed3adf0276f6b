/**
 * What the book commands share: the book a command acts on (`--customer`, defaulting as every
 * command's tenant does, and `--cadence`), whole-number flags checked against their limits, the
 * window's bounds, a refresh's id, and the schema problems of a request named by the flag they
 * came from, so a bad command line is a usage error (exit 2) that points at the flag.
 */
import { z } from 'zod';
import { DEFAULT_BOOK_CADENCE } from '../../../contract/book/book-definitions.js';
import { WINDOW_LIMITS, type WindowBounds } from '../../../contract/window/window-definitions.js';
import { WindowBoundsInput } from '../../../client/book-input.js';
import { onePositional, UsageError } from '../../args.js';
import type { CommandContext } from '../../command.js';

/** `--customer` and `--cadence` as parseArgs options. */
export const BOOK_OPTIONS = {
  customer: { type: 'string' },
  cadence: { type: 'string' },
} as const;

/** The window's bounds as parseArgs options (`book schedule`, `book run`). */
export const WINDOW_OPTIONS = {
  floor: { type: 'string' },
  ceiling: { type: 'string' },
  start: { type: 'string' },
  'page-size': { type: 'string' },
} as const;

export const BOOK_HELP = `  --customer <id>       tenant of the book (default AGGREGATOR_CUSTOMER_ID)
  --cadence <name>      which of its books (default nightly)`;

export const WINDOW_HELP = `  --floor <n>           never fewer connections in flight than this (unless the book runs out)
  --ceiling <n>         never more than this
  --start <n>           where the night's window starts
  --page-size <n>       logins read per page (each page drains before the next)`;

/** The flag (or argument) each field of a book request comes from, for usage errors. */
const FLAG_OF: Readonly<Record<string, string>> = {
  customerId: '--customer',
  cadence: '--cadence',
  loginId: '<loginId>',
  session: '--session',
  products: 'products',
  note: '--note',
  pageSize: '--page-size',
  pageToken: '--page-token',
  window: '--floor/--ceiling',
  'window.floor': '--floor',
  'window.ceiling': '--ceiling',
  'window.start': '--start',
  when: '--every/--daily',
  'when.every': '--every',
  'when.at': '--daily',
  'when.timeZone': '--time-zone',
  'when.jitter': '--jitter',
};

/** "--daily: must be HH:MM ...; --floor/--ceiling: floor must be at most ceiling" */
export function flagProblems(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.map(String).join('.');
      return `${FLAG_OF[path] ?? path}: ${issue.message}`;
    })
    .join('; ');
}

/** Checks `value` with the request's schema; its refusal names the flags. */
export function checked<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new UsageError(flagProblems(parsed.error));
  return parsed.data;
}

export interface BookFlags {
  readonly customer?: string | undefined;
  readonly cadence?: string | undefined;
}

/** The book named by the flags; `--cadence` left out where the command means every cadence. */
export function bookOf(values: BookFlags, context: CommandContext): { customerId: string; cadence?: string } {
  return { customerId: values.customer ?? context.defaultCustomerId, ...(values.cadence === undefined ? {} : { cadence: values.cadence }) };
}

/** "the nightly book of demo-lender" */
export function bookName(book: { readonly customerId: string; readonly cadence?: string | undefined }): string {
  return `the ${book.cadence ?? DEFAULT_BOOK_CADENCE} book of ${book.customerId}`;
}

/** A whole number within `min..max`, or a usage error naming the flag. */
export function wholeNumber(value: string | undefined, flag: string, limits: { readonly min: number; readonly max: number }): number | undefined {
  if (value === undefined) return undefined;
  const number = /^\d+$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
  if (!Number.isSafeInteger(number) || number < limits.min || number > limits.max)
    throw new UsageError(`${flag}: must be a whole number from ${limits.min} to ${limits.max}, got ${JSON.stringify(value)}`);
  return number;
}

export interface WindowFlags {
  readonly floor?: string | undefined;
  readonly ceiling?: string | undefined;
  readonly start?: string | undefined;
}

/** The bounds the flags give (undefined when none), checked as the client checks them. */
export function windowOf(values: WindowFlags): Partial<WindowBounds> | undefined {
  const bounds = {
    ...optional('floor', wholeNumber(values.floor, '--floor', WINDOW_LIMITS)),
    ...optional('ceiling', wholeNumber(values.ceiling, '--ceiling', WINDOW_LIMITS)),
    ...optional('start', wholeNumber(values.start, '--start', WINDOW_LIMITS)),
  };
  if (Object.keys(bounds).length === 0) return undefined;
  return checked(WindowRequest, { window: bounds }).window;
}

/** The bounds under the field name whose problems FLAG_OF maps ("window: floor must be at most ceiling"). */
const WindowRequest = z.object({ window: WindowBoundsInput });

function optional<K extends string>(key: K, value: number | undefined): Partial<Record<K, number>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, number>);
}

/** `<refreshId>`: a book refresh's workflow id, as `book run` and `book refreshes` print it. */
export function refreshIdOf(positionals: readonly string[]): string {
  const id = onePositional(positionals, '<refreshId>');
  if (!id.startsWith('book-'))
    throw new UsageError(
      `<refreshId>: must be a book refresh's workflow id (book-<customer>:<cadence>-<time>, as "book refreshes" lists them), got ${JSON.stringify(id)}`,
    );
  return id;
}

/**
 * What the pipeline asks for when it schedules the refresh of a saved login, checked before anything
 * reaches Temporal: the login, the session each run opens (cached or live refresh), the products,
 * and when runs happen: every day at HH:MM in an IANA time zone (with jitter), or every N
 * seconds/minutes/hours. Each problem is named by its field.
 */
import { z } from 'zod';
import { Uuid } from '../aggregator/schemas.js';
import { parseOrRefuse } from '../validation/parse-or-refuse.js';
import { ProductsInput, TimingInput } from '../contract/connection/connection-input.js';
import { KeySegment } from './business-key.js';
import { InvalidLoginRefError } from './errors.js';

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION_RULE = 'must be a duration such as 90s, 15m, 6h or 1d';
const DAY_MS = UNIT_MS.d;

/** `90s`, `15m`, `6h`, `1d` → milliseconds. */
const Duration = z
  .string()
  .trim()
  .transform((text, ctx) => {
    const match = /^(\d{1,6})([smhd])$/.exec(text);
    if (!match) {
      ctx.addIssue({ code: 'custom', message: `${DURATION_RULE} (got ${JSON.stringify(text.slice(0, 40))})` });
      return z.NEVER;
    }
    return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  });

const HourMinute = z
  .string()
  .trim()
  .regex(/^([01]\d|2[0-3]):[0-5]\d$/, { message: 'must be HH:MM on a 24-hour clock (00:00 to 23:59)' })
  .transform((text) => ({ hour: Number(text.slice(0, 2)), minute: Number(text.slice(3, 5)) }));

/** An IANA time zone the runtime knows (Temporal's server checks it again). */
const TimeZone = z
  .string()
  .trim()
  .min(1, { message: 'must not be empty' })
  .refine(
    (zone) => {
      try {
        new Intl.DateTimeFormat('en-US', { timeZone: zone });
        return true;
      } catch {
        return false;
      }
    },
    { error: (issue) => `unknown time zone ${JSON.stringify(issue.input)} (an IANA name such as America/Toronto or UTC)` },
  );

const DailyCadence = z
  .strictObject({
    kind: z.literal('daily'),
    /** Local time of the run, HH:MM. */
    at: HourMinute,
    timeZone: TimeZone.default('UTC'),
    /** Runs start up to this much later, at random: spreads a tenant's nightly refreshes. Default 15m. */
    jitter: Duration.default(15 * 60_000),
  })
  .refine((cadence) => cadence.jitter < DAY_MS, { path: ['jitter'], message: 'must be less than 1d' });

const IntervalCadence = z
  .strictObject({
    kind: z.literal('interval'),
    /** Time between runs: `90s`, `30m`, `6h`, `1d`. */
    every: Duration.refine((ms) => ms >= 1_000, { message: 'must be at least 1s' }),
    jitter: Duration.default(0),
  })
  .refine((cadence) => cadence.jitter <= cadence.every, { path: ['jitter'], message: 'must not be longer than the interval' });

export const RefreshCadence = z.discriminatedUnion('kind', [DailyCadence, IntervalCadence], {
  error: (issue) => (issue.code === 'invalid_union' ? 'must be daily or interval' : undefined),
});
/** As the pipeline writes it: `{ kind: 'daily', at: '02:30', timeZone: 'America/Toronto', jitter: '30m' }` or `{ kind: 'interval', every: '6h' }`. */
export type RefreshCadenceArgs = z.input<typeof RefreshCadence>;
export type RefreshCadence = z.infer<typeof RefreshCadence>;

const LoginId = z.string().trim().min(1, { message: 'must not be empty' }).pipe(Uuid);

/** One saved login of one tenant (other fields are ignored, so a schedule request or summary will do). */
export const LoginRef = z.object({ customerId: KeySegment, loginId: LoginId });
export type LoginRef = z.input<typeof LoginRef>;

/** The login a call names, checked before anything reaches Temporal (InvalidLoginRefError names the field). */
export function parseLoginRef(ref: LoginRef): { customerId: string; loginId: string } {
  return parseOrRefuse(LoginRef, ref, (problem, cause) => new InvalidLoginRefError(problem, { cause }));
}

export const RefreshScheduleInput = z.strictObject({
  customerId: KeySegment,
  loginId: LoginId,
  /** What each run opens: the saved data (`cached`, default) or a live refresh at the institution (`refresh`). */
  session: z.enum(['cached', 'refresh']).default('cached'),
  products: ProductsInput,
  cadence: RefreshCadence,
  timing: TimingInput.optional(),
  /** Create it paused (it runs once unpaused or triggered). */
  paused: z.boolean().default(false),
  note: z.string().trim().max(500).optional(),
});
export type RefreshScheduleArgs = z.input<typeof RefreshScheduleInput>;
export type RefreshScheduleInput = z.infer<typeof RefreshScheduleInput>;

/** Back to what the pipeline wrote (the schedule's memo keeps this form). */
export function cadenceArgsOf(cadence: RefreshCadence): RefreshCadenceArgs {
  if (cadence.kind === 'daily') {
    const at = `${String(cadence.at.hour).padStart(2, '0')}:${String(cadence.at.minute).padStart(2, '0')}`;
    return { kind: 'daily', at, timeZone: cadence.timeZone, jitter: formatCadenceDuration(cadence.jitter) };
  }
  return { kind: 'interval', every: formatCadenceDuration(cadence.every), jitter: formatCadenceDuration(cadence.jitter) };
}

/** The largest whole unit: 5400000 → "90m", 86400000 → "1d". */
export function formatCadenceDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm'] as const) if (ms > 0 && ms % UNIT_MS[unit] === 0) return `${ms / UNIT_MS[unit]}${unit}`;
  return `${Math.round(ms / 1_000)}s`;
}

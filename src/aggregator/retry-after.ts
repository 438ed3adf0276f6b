/**
 * The `Retry-After` header (RFC 9110 §10.2.3): delay-seconds or an HTTP-date. The client reads it on
 * answers that refuse a request for now (429, 503, and codes the failure table says were refused and
 * are worth retrying: TOO_MANY_REQUESTS under any status, RETRY_LATER) and carries it on the error as
 * `retryAfterMs`, so a retry can wait what the service asked instead of its own backoff.
 */

/** The longest wait honoured: a longer (or absurd) value is capped, not trusted. */
export const MAX_RETRY_AFTER_MS = 60 * 60_000;

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAY = '(?:mon|tue|wed|thu|fri|sat|sun)';
const LONG_DAY = '(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)';
const MONTH = '(?<month>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)';
const TIME = '(?<hour>\\d{2}):(?<minute>\\d{2}):(?<second>\\d{2})';
/** The three forms of RFC 9110 §5.6.7, case-insensitive. */
const HTTP_DATES = [
  // IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`.
  new RegExp(`^${DAY}, (?<day>\\d{2}) ${MONTH} (?<year>\\d{4}) ${TIME} GMT$`, 'i'),
  // Obsolete RFC 850: `Sunday, 06-Nov-94 08:49:37 GMT`.
  new RegExp(`^${LONG_DAY}, (?<day>\\d{2})-${MONTH}-(?<year2>\\d{2}) ${TIME} GMT$`, 'i'),
  // Obsolete asctime: `Sun Nov  6 08:49:37 1994` (GMT implied).
  new RegExp(`^${DAY} ${MONTH} (?<day> \\d|\\d{2}) ${TIME} (?<year>\\d{4})$`, 'i'),
];

/**
 * An HTTP-date in ms since the epoch, or undefined when it is not one of the three forms of
 * RFC 9110 §5.6.7 or names no real instant (31 Feb, 25:00). Strict on purpose: Date.parse would
 * read a bare number or free text as some date. `nowMs` places a two-digit year.
 */
export function parseHttpDate(text: string | null | undefined, nowMs: number = Date.now()): number | undefined {
  if (!text) return undefined;
  const value = text.trim();
  const groups = HTTP_DATES.map((form) => form.exec(value)?.groups).find((found) => found !== undefined);
  if (!groups) return undefined;
  const [day, hour, minute, second] = [groups.day, groups.hour, groups.minute, groups.second].map(Number) as [number, number, number, number];
  const month = MONTHS.indexOf((groups.month ?? '').toLowerCase());
  let year = Number(groups.year);
  if (groups.year2 !== undefined) {
    // A two-digit year more than 50 years ahead is the most recent past year with those digits.
    const currentYear = new Date(nowMs).getUTCFullYear();
    year = Math.floor(currentYear / 100) * 100 + Number(groups.year2);
    if (year > currentYear + 50) year -= 100;
  }
  // :60 is a leap second (read as the next second's start).
  if (hour > 23 || minute > 59 || second > 60) return undefined;
  if (new Date(Date.UTC(year, month, day)).getUTCDate() !== day) return undefined;
  return Date.UTC(year, month, day, hour, minute, second);
}

/**
 * How long `Retry-After` asks to wait, in ms, capped at MAX_RETRY_AFTER_MS; 0 for a date already
 * past; undefined when absent or not a valid value (garbage is ignored, never guessed at).
 * `referenceMs` is "now" for an HTTP-date: the answer's own `Date` header when it has one (so the
 * two clocks' skew cancels out), else the local clock.
 */
export function parseRetryAfter(value: string | null | undefined, referenceMs: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1_000, MAX_RETRY_AFTER_MS);
  const date = parseHttpDate(text, referenceMs);
  if (date === undefined) return undefined;
  return Math.min(Math.max(0, date - referenceMs), MAX_RETRY_AFTER_MS);
}

/** `Retry-After` of an answer, relative to its `Date` header when that parses. */
export function retryAfterOf(headers: Headers, nowMs: number = Date.now()): number | undefined {
  const value = headers.get('retry-after');
  if (value === null) return undefined;
  return parseRetryAfter(value, parseHttpDate(headers.get('date'), nowMs) ?? nowMs);
}

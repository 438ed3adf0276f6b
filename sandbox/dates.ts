/** Calendar arithmetic on UTC day numbers (days since 1970-01-01): no time zones, no DST. */

export function dayOf(isoDate: string): number {
  const [y, m, d] = isoDate.split('-').map(Number);
  return Math.floor(Date.UTC(y ?? 1970, (m ?? 1) - 1, d ?? 1) / 86_400_000);
}

export function isoOf(day: number): string {
  return new Date(day * 86_400_000).toISOString().slice(0, 10);
}

/** YYYY/MM/DD, the attributes answer's date format. */
export function slashOf(isoDate: string): string {
  return isoDate.replaceAll('-', '/');
}

export function parts(day: number): { year: number; month: number; date: number; weekday: number; lastOfMonth: boolean } {
  const at = new Date(day * 86_400_000);
  const next = new Date((day + 1) * 86_400_000);
  return { year: at.getUTCFullYear(), month: at.getUTCMonth() + 1, date: at.getUTCDate(), weekday: at.getUTCDay(), lastOfMonth: next.getUTCDate() === 1 };
}

/** "Timestamp without zone designator, fractional seconds" as the spec's Login.LastRefresh. */
export function localTimestamp(ms: number): string {
  return new Date(ms).toISOString().slice(0, -1);
}

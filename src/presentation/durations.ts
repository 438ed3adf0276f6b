/**
 * How a duration is written for an operator, the one source for the CLI (`connections show`,
 * `watch`, `book status`) and the console's pages, which import this file's compiled JavaScript
 * as `/shared/durations.js` (served by src/console/pages.ts). So it stays browser-safe:
 * no imports at all (no Node built-in, no package), nothing but pure functions.
 */

/** "1h 02m", "14m 05s", "9s"; negative durations print as "0s". */
export function formatElapsed(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  if (h > 0) return `${h}h ${String(m).padStart(2, '0')}m`;
  if (m > 0) return `${m}m ${String(s).padStart(2, '0')}s`;
  return `${s}s`;
}

/** Tenths of a second below 10 s (a book's child often takes less than one), else as formatElapsed: "14m 05s". */
export function took(ms: number): string {
  return ms < 10_000 ? `${(Math.max(0, ms) / 1000).toFixed(1)}s` : formatElapsed(ms);
}

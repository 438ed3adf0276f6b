// How the console pages write durations (loaded before app.js and books.js). The same text as the
// CLI's: formatElapsed is src/client/presentation.ts's, took is src/client/cli/commands/book/format.ts's;
// the page is served without a build step, so these are copies, held to the TypeScript by
// test/client/console-page-format.test.ts on a table of durations.
// @ts-check: checked by tsconfig.page.json and tsconfig.page-books.json (allowJs + checkJs).
'use strict';

/**
 * "1h 02m", "14m 05s", "9s"; negative durations print as "0s".
 * @param {number} ms
 * @returns {string}
 */
function formatElapsed(ms) {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  if (h > 0) return `${h}h ${String(m).padStart(2, '0')}m`;
  if (m > 0) return `${m}m ${String(s).padStart(2, '0')}s`;
  return `${s}s`;
}

/**
 * Tenths of a second below 10 s (a child often takes less than one), else as formatElapsed.
 * @param {number} ms
 * @returns {string}
 */
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- used by books.js
function took(ms) {
  return ms < 10_000 ? `${(Math.max(0, ms) / 1000).toFixed(1)}s` : formatElapsed(ms);
}

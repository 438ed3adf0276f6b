/**
 * The console page's duration formatting (src/client/console/page/format.js, served without a build
 * step) against the CLI's TypeScript it copies: the same text for a table of durations, so the page
 * and `connections show` / `book status` never disagree. The page file is run as the browser runs it,
 * a classic script, here in a VM context of its own.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { runInNewContext } from 'node:vm';
import { took } from '../../src/client/cli/commands/book/format.js';
import { formatElapsed } from '../../src/client/presentation.js';

const PAGE_SCRIPT = readFileSync(new URL('../../src/client/console/page/format.js', import.meta.url), 'utf8');
const page = runInNewContext(`${PAGE_SCRIPT}\n;({ formatElapsed, took })`, {}, { filename: 'format.js' }) as { formatElapsed: (ms: number) => string; took: (ms: number) => string };

const DURATIONS = [-5_000, -1, 0, 1, 99, 999, 1_000, 1_001, 9_949, 9_950, 9_999, 10_000, 10_999, 59_999, 60_000, 61_000, 599_999, 3_599_999, 3_600_000, 3_661_000, 86_399_999, 90_061_000, 360_000_000];

describe("the console page's durations", () => {
  it('formatElapsed writes what the CLI writes', () => {
    for (const ms of DURATIONS) assert.equal(page.formatElapsed(ms), formatElapsed(ms), `${ms} ms`);
  });

  it('took writes what the CLI writes, tenths below 10 s', () => {
    for (const ms of DURATIONS) assert.equal(page.took(ms), took(ms), `${ms} ms`);
    assert.equal(page.took(15_000), '15s', "the books page said 0m 15s where the CLI says 15s, before it shared the CLI's rule");
  });
});

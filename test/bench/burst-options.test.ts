/**
 * `npm run bench:burst`'s command line over the shared reader (scripts/lib/cli-options.ts): either
 * form of a value, and each mistake a BurstArgumentError naming the argument. No stack is started.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BurstArgumentError, parseBurstArgs } from '../../bench/burst/options.js';

const parse = (...argv: string[]) => parseBurstArgs(argv, () => 1);
const refused = (argv: string[], message: RegExp) =>
  assert.throws(
    () => parse(...argv),
    (error: unknown) => error instanceof BurstArgumentError && message.test(error.message),
    `${argv.join(' ')} refused with ${String(message)}`,
  );

void describe('npm run bench:burst: its command line read by the shared reader', () => {
  void it('reads --x=value as it does --x value', () => {
    const inline = parse('--storm', '--a=60', '--b=12', '--only=off', '--budget=80.5', '--seed=3', '--keep-logs');
    assert.deepEqual(inline, parse('--storm', '--a', '60', '--b', '12', '--only', 'off', '--budget', '80.5', '--seed', '3', '--keep-logs'));
    assert.deepEqual([inline?.a, inline?.b, inline?.modes, inline?.budgetRps, inline?.seed, inline?.keepLogs], [60, 12, ['off'], 80.5, 3, true]);
  });

  void it('refuses an unknown option or a bare word', () => {
    refused(['--c'], /^unknown argument "--c"$/);
    refused(['--c=1'], /^unknown argument "--c=1"$/);
    refused(['--a', '60', 'night'], /^unknown argument "night"$/);
  });

  void it('refuses an option given twice', () => {
    refused(['--a', '60', '--a', '70'], /^--a given twice$/);
    refused(['--only=on', '--only', 'off'], /^--only given twice$/);
  });

  void it('refuses a flag given a value', () => {
    refused(['--storm=yes'], /^--storm takes no value$/);
    refused(['--keep-logs=1'], /^--keep-logs takes no value$/);
  });

  void it('refuses an option without its value, the next option not taken for it', () => {
    refused(['--seed', '--keep-logs'], /^--seed needs a value$/);
    refused(['--a'], /^--a needs a value$/);
    refused(['--only='], /^--only needs a value$/);
  });

  void it('refuses a bad number naming the option', () => {
    refused(['--live=many'], /^--live must be an integer from 1 to 1000, got "many"$/);
    refused(['--seed', '-1'], /^--seed must be an integer from 0 to 2147483647, got "-1"$/);
    refused(['--window', '1.5'], /^--window must be an integer from 1 to 3600, got "1.5"$/);
  });
});

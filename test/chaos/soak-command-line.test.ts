/**
 * `npm run chaos:soak`'s command line over the shared reader (scripts/lib/cli-options.ts): its own
 * options taken out in either form and each mistake refused by name, every other word passed to the
 * chaos runs as typed and in order, for chaos's parser to check. No chaos run is made.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ChaosArgumentError } from '../../scripts/chaos/options.js';
import { parseSoakArgs, runSeeds } from '../../scripts/chaos/soak-options.js';

const parse = (...argv: string[]) => parseSoakArgs(argv, () => 42);
const refused = (argv: string[], argument: string, problem: RegExp) =>
  assert.throws(
    () => parse(...argv),
    (error: unknown) => error instanceof ChaosArgumentError && error.argument === argument && problem.test(error.problem),
    `${argv.join(' ')} refused as ${argument} ${String(problem)}`,
  );

void describe('npm run chaos:soak: its command line read by the shared reader', () => {
  void it('reads its own options as --x=value as it does --x value', () => {
    const inline = parse('--runs=1', '--query-run=off', '--seed=7', '--run-timeout-ms=120000', '--workers=3');
    const spaced = parse('--runs', '1', '--query-run', 'off', '--seed', '7', '--run-timeout-ms', '120000', '--workers=3');
    assert.ok(inline);
    assert.deepEqual(inline, spaced);
    assert.equal(inline.soakSeed, 7);
    assert.equal(inline.runTimeoutMs, 120_000);
    assert.deepEqual(
      inline.runs.map((run) => run.seed),
      runSeeds(7, 1),
    );
    assert.deepEqual(inline.chaosArgs, ['--connections', '150', '--reply-delay-ms', '2000', '--workers=3']);
    assert.equal(parse('--query-every-ms=50')?.runs.at(-1)?.queryEveryMs, 50);
    assert.equal(parse('--keep-logs')?.keepLogs, true);
  });

  void it("passes chaos's words through as typed and in order, its own taken from between them", () => {
    const options = parse('--workers', '3', '--runs', '1', '--kill-target=random', '--seed', '5', '--connections', '8', '--keep-logs');
    assert.ok(options);
    assert.deepEqual(options.chaosArgs, ['--reply-delay-ms', '2000', '--workers', '3', '--kill-target=random', '--connections', '8']);
    assert.equal(options.soakSeed, 5);
    assert.deepEqual(options.runs[0]?.args.slice(-3), ['--seed', String(options.runs[0]?.seed), '--keep-logs']);
  });

  void it('refuses an unknown option or a bare word, as chaos does', () => {
    refused(['--frobnicate=1'], '--frobnicate=1', /^unknown option$/);
    refused(['--runs', '1', '--sed', '7'], '--sed', /^unknown option$/);
    refused(['fast'], 'fast', /unexpected argument \(options start with --\)/);
  });

  void it('refuses an option given twice, its own or a chaos one', () => {
    refused(['--runs', '1', '--runs', '2'], '--runs', /^given twice$/);
    refused(['--seed=1', '--seed', '2'], '--seed', /^given twice$/);
    refused(['--workers', '2', '--workers=3'], '--workers', /^given twice$/);
  });

  void it('refuses a flag given a value', () => {
    refused(['--keep-logs=yes'], '--keep-logs', /^takes no value$/);
    refused(['--help=1'], '--help', /^takes no value$/);
  });

  void it('refuses an option without its value, the next option not taken for it', () => {
    refused(['--seed', '--keep-logs'], '--seed', /^needs a value$/);
    refused(['--runs'], '--runs', /^needs a value$/);
    refused(['--query-run='], '--query-run', /^needs a value$/);
    // A chaos option's value is missing when the soak's own option after it is taken out.
    refused(['--workers', '--keep-logs'], '--workers', /^needs a value$/);
  });

  void it('refuses a bad number naming the option', () => {
    refused(['--seed', '-5'], '--seed', /whole number/);
    refused(['--runs=many'], '--runs', /must be a whole number from 0 to 1000 \(got "many"\)/);
    refused(['--connections=0'], '--connections', /from 1 to 5000/);
  });
});

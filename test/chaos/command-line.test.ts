/**
 * The rehearsals' command lines (scripts/lib/cli-options.ts over node:util's parseArgs), as chaos
 * and prod:check read them: each refusal names the option and what is wrong with it, and the values
 * given either way (`--seed 7`, `--seed=7`) are the same.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readCommandLine } from '../../scripts/lib/cli-options.js';
import { ChaosArgumentError, parseChaosArgs } from '../../scripts/chaos/options.js';
import { parseProdCheckArgs } from '../../scripts/prod-check/options.js';

const SPEC = { flags: ['--keep-logs', '--help'], values: ['--seed', '--workers'] };
const read = (argv: string[]) => readCommandLine(argv, SPEC, (name, problem) => new ChaosArgumentError(name, problem));
const refusal = (argv: string[]) => {
  try {
    read(argv);
  } catch (error) {
    assert.ok(error instanceof ChaosArgumentError);
    return error.message;
  }
  return assert.fail(`${argv.join(' ')} was accepted`);
};

void describe('a rehearsal command line', () => {
  void it('reads flags and values, inline or after the option', () => {
    const line = read(['--seed', '7', '--workers=3', '--keep-logs']);
    assert.deepEqual([...line.flags], ['--keep-logs']);
    assert.deepEqual(
      [...line.values],
      [
        ['--seed', '7'],
        ['--workers', '3'],
      ],
    );
  });

  void it('refuses each mistake by name', () => {
    assert.match(refusal(['--sed', '7']), /--sed.*unknown option/);
    assert.match(refusal(['--sed=7']), /--sed=7.*unknown option/);
    assert.match(refusal(['seven']), /seven.*unexpected argument \(options start with --\)/);
    assert.match(refusal(['--keep-logs=yes']), /--keep-logs.*takes no value/);
    assert.match(refusal(['--seed', '1', '--seed', '2']), /--seed.*given twice/);
    assert.match(refusal(['--seed']), /--seed.*needs a value/);
    assert.match(refusal(['--seed', '--keep-logs']), /--seed.*needs a value/);
    assert.match(refusal(['--seed=']), /--seed.*needs a value/);
    assert.match(refusal(['--', 'x']), /^--: unknown option/);
  });

  void it('is what chaos and prod:check read, their own checks after it', () => {
    assert.equal(parseChaosArgs(['--seed=9', '--workers', '4'], () => 1)?.seed, 9);
    assert.equal(
      parseChaosArgs(['--help'], () => 1),
      undefined,
    );
    assert.throws(() => parseChaosArgs(['--workers', 'many'], () => 1), /--workers.*must be a whole number/);
    assert.equal(parseProdCheckArgs(['--connections', '6', '--keep-logs'], () => 1)?.connections, 6);
    assert.throws(() => parseProdCheckArgs(['--tls=1'], () => 1), /--tls.*takes no value/);
  });
});

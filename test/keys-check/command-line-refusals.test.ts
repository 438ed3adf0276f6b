/**
 * deploy:check's and keys:check's command lines (the shared reader, scripts/lib/cli-options.ts): the
 * refusals test/keys-check/options.test.ts does not already make, each naming the argument.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DeployCheckArgumentError, parseDeployCheckArgs } from '../../scripts/deploy-check/options.js';
import { KeysCheckArgumentError, parseKeysCheckArgs } from '../../scripts/keys-check/options.js';

const deploy =
  (...argv: string[]) =>
  () =>
    parseDeployCheckArgs(argv, () => 1);
const keys =
  (...argv: string[]) =>
  () =>
    parseKeysCheckArgs(argv);

test('either form of a value reads the same', () => {
  assert.deepEqual(
    parseDeployCheckArgs(['--ramp-percent=30', '--seed=9'], () => 1),
    parseDeployCheckArgs(['--ramp-percent', '30', '--seed', '9'], () => 1),
  );
  assert.deepEqual(parseKeysCheckArgs(['--connections=30', '--deadline-ms=60000']), parseKeysCheckArgs(['--connections', '30', '--deadline-ms', '60000']));
});

test('unknown, twice, a flag with a value, a missing value, a bad number: each refused by name', () => {
  const refusals: [() => unknown, RegExp][] = [
    [deploy('--rotate=1'), /^unknown argument "--rotate=1"$/],
    [deploy('--seed'), /^--seed needs a value$/],
    [deploy('--seed='), /^--seed needs a value$/],
    [deploy('--help=yes'), /^--help takes no value$/],
    [deploy('--per-stage', 'many'), /^--per-stage must be an integer from 1 to 200, got "many"$/],
    [keys('--rotate=1'), /^unknown argument "--rotate=1"$/],
    [keys('later'), /^unknown argument "later"$/],
    [keys('--workers', '2', '--workers=3'), /^--workers given twice$/],
    [keys('--keep-logs=yes'), /^--keep-logs takes no value$/],
    [keys('--kms-down-ms', '--keep-logs'), /^--kms-down-ms needs a value$/],
    [keys('--deadline-ms=10'), /^--deadline-ms must be an integer from 30000 to 86400000, got "10"$/],
  ];
  for (const [parse, message] of refusals) {
    assert.throws(
      parse,
      (error: unknown) => (error instanceof DeployCheckArgumentError || error instanceof KeysCheckArgumentError) && message.test(error.message),
      String(message),
    );
  }
});

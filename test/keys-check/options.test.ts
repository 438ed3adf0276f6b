import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DeployCheckArgumentError, parseDeployCheckArgs } from '../../scripts/deploy-check/options.js';
import { KeysCheckArgumentError, parseKeysCheckArgs } from '../../scripts/keys-check/options.js';

// The two checks' command lines, read by the shared parseArgs reader (scripts/lib/cli-options.ts).

test('deploy:check reads its options in either form, with its defaults and a given seed', () => {
  assert.deepEqual(
    parseDeployCheckArgs(['--per-stage=6', '--workers', '3', '--keep-logs'], () => 42),
    {
      perStage: 6,
      workers: 3,
      rampPercent: 50,
      seed: 42,
      keepLogs: true,
    },
  );
  assert.equal(parseDeployCheckArgs(['--seed', '7'], () => 42)?.seed, 7);
  assert.equal(
    parseDeployCheckArgs(['--help'], () => 42),
    undefined,
  );
});

test('keys:check reads its options with its defaults', () => {
  assert.deepEqual(parseKeysCheckArgs(['--kms-down-ms', '0', '--data-key-lifetime-s=5']), {
    connections: 24,
    workers: 2,
    dataKeyLifetimeS: 5,
    kmsDownMs: 0,
    deadlineMs: 240_000,
    keepLogs: false,
  });
});

test('a bad command line is refused by name: unknown, twice, a flag with a value, a missing value, out of bounds', () => {
  const refusals: [() => unknown, RegExp][] = [
    [() => parseDeployCheckArgs(['--rotate'], () => 1), /unknown argument "--rotate"/],
    [() => parseDeployCheckArgs(['stage'], () => 1), /unknown argument "stage"/],
    [() => parseDeployCheckArgs(['--workers', '2', '--workers', '3'], () => 1), /--workers given twice/],
    [() => parseDeployCheckArgs(['--keep-logs=yes'], () => 1), /--keep-logs takes no value/],
    [() => parseDeployCheckArgs(['--seed', '--keep-logs'], () => 1), /--seed needs a value/],
    [() => parseDeployCheckArgs(['--ramp-percent', '100'], () => 1), /--ramp-percent/],
    [() => parseKeysCheckArgs(['--rotate-twice']), /unknown argument "--rotate-twice"/],
    [() => parseKeysCheckArgs(['--workers']), /--workers needs a value/],
    [() => parseKeysCheckArgs(['--connections', '1']), /--connections/],
  ];
  for (const [parse, message] of refusals) {
    assert.throws(
      parse,
      (error: unknown) => (error instanceof DeployCheckArgumentError || error instanceof KeysCheckArgumentError) && message.test(error.message),
    );
  }
});

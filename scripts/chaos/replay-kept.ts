/**
 * Replays the histories a kept chaos run left in its directory, without its server:
 *   bash scripts/with-pinned-node.sh tsx scripts/chaos/replay-kept.ts <run directory> [--run-bundle]
 * Against today's workflow sources by default (does a change still replay what the run recorded?),
 * or, with --run-bundle, against the bundle the run's workers loaded. Payloads decode with the run's
 * key (payload-encryption.key) and its payload store (payloads/), as the workers had them.
 * Exit 0 when every history replays; 1 when one does not; 2 for a bad argument.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadHistories } from './histories.js';
import { renderReplay, replayHistories, replayPassed, type ReplayCode } from './replay-run.js';
import { readRunKey, REPLAY_ENTRY } from './run-key.js';

const USAGE = `usage: bash scripts/with-pinned-node.sh tsx ${REPLAY_ENTRY} <run directory> [--run-bundle]`;

async function main(argv: readonly string[]): Promise<number> {
  if (argv.includes('--help')) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const flags = argv.filter((arg) => arg.startsWith('--'));
  const paths = argv.filter((arg) => !arg.startsWith('--'));
  const unknown = flags.filter((flag) => flag !== '--run-bundle');
  if (paths.length !== 1 || unknown.length > 0) {
    process.stderr.write(`${unknown.length > 0 ? `replay-kept: unknown option ${unknown.join(', ')}\n` : ''}${USAGE}\n`);
    return 2;
  }
  const runDir = paths[0] ?? '';
  const histories = await loadHistories(join(runDir, 'histories'));
  const encryption = await readRunKey(runDir);
  const payloads = join(runDir, 'payloads');
  const code: ReplayCode = flags.includes('--run-bundle') ? { kind: 'bundle', path: join(runDir, 'workflow-bundle.js') } : { kind: 'source' };
  const report = await replayHistories(histories, [], {
    code,
    // The run's store settings but for the threshold, which only decides what is stored, never how it is read.
    payload: { encryption, payloadStore: existsSync(payloads) ? { kind: 'local', directory: payloads } : { kind: 'off' } },
    replayName: 'chaos-kept',
  });
  for (const line of renderReplay(report)) process.stdout.write(`${line}\n`);
  return replayPassed(report) ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`replay-kept: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);

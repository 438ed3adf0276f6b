/**
 * bench/cpu-profile.ts reads V8 profiles as `node --cpu-prof` writes them: written here by a real
 * Node process for one case, and made by hand (exact times) for the sums, areas and window.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { areaOf, cpuProfileLines, monotonicUs, summarizeCpuProfiles } from '../../bench/cpu-profile.js';

let dir: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cpu-profile-'));
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

const frame = (id: number, functionName: string, url: string, lineNumber = 0) => ({
  id,
  callFrame: { functionName, url, lineNumber, scriptId: '0', columnNumber: 0 },
  hitCount: 0,
});

/** A profile of 1 ms samples: `samples` node ids, the first at startTime + 1 ms, ending at the last. */
function profile(samples: number[]) {
  const nodes = [
    frame(1, '(root)', ''),
    frame(2, '(idle)', ''),
    frame(3, 'encode', 'file:///app/dist/src/codec/encryption-codec.js', 41),
    frame(4, 'parse', 'file:///app/node_modules/zod/v4/classic/parse.js', 9),
    frame(5, 'activate', 'file:///app/node_modules/@temporalio/worker/lib/worker.js', 99),
    frame(6, '(garbage collector)', ''),
    frame(7, 'readFile', 'node:fs', 3),
  ];
  return { nodes, startTime: 1_000_000, endTime: 1_000_000 + samples.length * 1000, samples, timeDeltas: samples.map(() => 1000) };
}

void describe('CPU profiles', () => {
  void it('names the area of a frame: product directories, packages, Node, V8', () => {
    assert.equal(areaOf('file:///app/dist/src/codec/encryption-codec.js', 'encode'), 'product codec');
    assert.equal(areaOf('file:///app/src/worker.ts', 'main'), 'product');
    assert.equal(areaOf('file:///app/node_modules/@temporalio/common/lib/x.js', 'f'), '@temporalio/common');
    assert.equal(areaOf('file:///app/node_modules/.pnpm/zod/node_modules/zod/index.js', 'f'), 'zod');
    assert.equal(areaOf('node:internal/streams', 'f'), 'node internals');
    assert.equal(areaOf('', '(garbage collector)'), '(garbage collector)');
    assert.equal(areaOf('', 'nativeThing'), '(native)');
    assert.equal(areaOf('file:///tmp/bench-bundle-x/workflow-bundle.js', 'f'), 'workflow bundle');
  });

  void it('sums self time per area and function over every thread, idle left out, within the window', async () => {
    const threads = join(dir, 'threads');
    await mkdir(threads);
    // Main thread: 10 samples; 2 idle, 3 codec, 2 zod, 1 @temporalio/worker, 1 GC, 1 fs.
    await writeFile(join(threads, 'CPU.1.0.cpuprofile'), JSON.stringify(profile([2, 3, 3, 4, 2, 5, 3, 4, 6, 7])));
    // A workflow thread: 4 samples of the codec.
    await writeFile(join(threads, 'CPU.1.1.cpuprofile'), JSON.stringify(profile([3, 3, 3, 3])));
    const whole = await summarizeCpuProfiles(threads);
    assert.equal(whole.threads, 2);
    assert.equal(whole.busyMs, 12);
    assert.deepEqual(
      [...whole.areas],
      [
        ['product codec', 7],
        ['zod', 2],
        ['@temporalio/worker', 1],
        ['(garbage collector)', 1],
        ['node internals', 1],
      ],
    );
    assert.equal(whole.functions.get('encode dist/src/codec/encryption-codec.js:42'), 7);

    // From 6 ms to 9 ms after both profiles' start: the main thread's samples at 6-9 ms
    // (@temporalio/worker, codec, zod, GC); the other thread's end at 4 ms (none).
    const window = await summarizeCpuProfiles(threads, { fromUs: 1_006_000, toUs: 1_009_000 });
    assert.equal(window.busyMs, 4);
    assert.equal(window.areas.get('product codec'), 1);
    assert.equal(window.areas.get('node internals'), undefined, 'the last sample is after the window');
    const lines = cpuProfileLines(whole, window, 2, { top: 1 });
    assert.match(
      lines[0] ?? '',
      /^profile \(ms a connection, self time in the measured runs, 2 product and 2 floor thread profiles\): product 6\.00, floor 2\.00, difference 4\.00$/,
    );
    assert.equal(lines.at(-2), "the product's functions beyond the floor (self ms a connection: product, floor):");
    // The whole against the window: the codec's 7 against 1 is the largest difference.
    assert.equal(lines.at(-1), '  +3.00 encode dist/src/codec/encryption-codec.js:42 (3.50, 0.50)');
    // Against another side, by its name.
    const named = cpuProfileLines(whole, window, 2, { floorName: 'floor with calls', top: 1 });
    assert.match(named[0] ?? '', /2 product and 2 floor with calls thread profiles\): product 6\.00, floor with calls 2\.00, difference 4\.00$/);
    assert.equal(named.at(-2), "the product's functions beyond the floor with calls (self ms a connection: product, floor with calls):");
  });

  void it('reads a profile Node wrote, stamped on the clock monotonicUs reads, and says what to do when there is none', async () => {
    const written = join(dir, 'written');
    const before = monotonicUs();
    const run = spawnSync(
      process.execPath,
      ['--cpu-prof', `--cpu-prof-dir=${written}`, '-e', 'let x = 0; for (let i = 0; i < 3e7; i += 1) x += i; console.log(x > 0)'],
      { encoding: 'utf8' },
    );
    assert.equal(run.status, 0, run.stderr);
    const after = monotonicUs();
    const summary = await summarizeCpuProfiles(written);
    assert.ok(summary.busyMs > 0, 'some busy time');
    // The window of the child's whole life, read here, holds all of its samples; one ending before it started, none.
    assert.equal((await summarizeCpuProfiles(written, { fromUs: before, toUs: after })).busyMs, summary.busyMs);
    assert.equal((await summarizeCpuProfiles(written, { fromUs: before - 10_000_000, toUs: before })).busyMs, 0);
    assert.ok(summary.threads >= 1);
    await assert.rejects(summarizeCpuProfiles(dir), /no \.cpuprofile in .*: was the process started with --cpu-prof and did it exit on its own\?/);
  });
});

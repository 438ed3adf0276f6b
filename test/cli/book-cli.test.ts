/**
 * The `book` commands of the operator CLI against the whole stack (real dev server, worker with the
 * book workflows, sandbox), run in-process with captured output as cli.test.ts runs the others:
 * enrol, list a page at a time, run, follow the progress, read the report and a page of it; pause,
 * resize, resume and cancel a running refresh; schedule and migrate; and bad arguments.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { runCaptured, type Captured } from './cli-capture.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE } from '../../src/cli/report.js';
import type { ConnectionsClient } from '../../src/client/index.js';
import type { ConnectionStack } from '../helpers/connection-stack.js';
import { waitFor } from '../helpers/temporal.js';
import { startClientStack, stopClientStack } from '../client/client-stack.js';

let env: TestWorkflowEnvironment;
let stack: ConnectionStack;
let client: ConnectionsClient;

before(async () => {
  ({ env, stack, client } = await startClientStack());
});

after(async () => {
  await stopClientStack({ stack, env });
});

function cli(args: string[]): Promise<Captured> {
  return runCaptured(args, { stack, client });
}

let logins = 0;

/**
 * A fresh saved login (the sandbox keeps one login per username and tenant, so each gets its own
 * `pending_ms_<n>` name) whose data operations answer at once (pendingPolls 0), or stay pending for
 * one 10 s poll.
 */
async function savedLogin(pendingPolls: number): Promise<string> {
  logins += 1;
  const response = await fetch(`${stack.sandboxUrl}/sandbox/${encodeURIComponent(stack.customerId)}/logins`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: `pending_ms_${logins}`, pendingPolls }),
  });
  assert.ok(response.ok, `the sandbox saved a login: ${response.status}`);
  return ((await response.json()) as { LoginId: string }).LoginId;
}

async function enrolled(cadence: string, count: number, pendingPolls: number): Promise<string[]> {
  const logins: string[] = [];
  for (let index = 0; index < count; index += 1) {
    const loginId = await savedLogin(pendingPolls);
    const result = await cli(['book', 'enrol', loginId, '--cadence', cadence]);
    assert.equal(result.code, EXIT_OK, result.err);
    logins.push(loginId);
  }
  await waitFor(async () => (await client.books.count({ customerId: stack.customerId, cadence })) === count, { describe: `${count} logins in ${cadence}` });
  return logins;
}

/** The refresh id a `book run` printed. */
function startedId(result: Captured): string {
  assert.equal(result.code, EXIT_OK, result.err);
  const id = /^(?:started|already running:) (book-\S+?),? /m.exec(result.out)?.[1];
  assert.ok(id, `a refresh id in: ${result.out}`);
  return id;
}

async function reportWhenEnded(refreshId: string): Promise<Captured> {
  return waitFor(
    async () => {
      const result = await cli(['book', 'report', refreshId]);
      return result.code === EXIT_OK ? result : undefined;
    },
    { timeoutMs: 90_000, intervalMs: 250, describe: `the report of ${refreshId}` },
  );
}

void describe('the book commands of the CLI', () => {
  void it('enrols logins, lists them a page at a time, runs the book, follows its progress and reads its report and a page of it', async () => {
    const cadence = 'cli-flow';
    const logins = await enrolled(cadence, 2, 0);

    const first = await cli(['book', 'list', '--cadence', cadence, '--page-size', '1']);
    assert.equal(first.code, EXIT_OK, first.err);
    assert.match(first.out, /^LOGIN\s+CADENCE\s+SESSION\s+PRODUCTS\s+ENROLLED\s+FLAG/);
    assert.match(first.out, new RegExp(`\\s+${cadence}\\s+cached\\s+accountsDetail\\s+\\d{4}-\\S+\\s+-`));
    const token = /^next page: --page-token (\S+)$/m.exec(first.out)?.[1];
    assert.ok(token, `a next page token in: ${first.out}`);
    const second = await cli(['book', 'list', '--cadence', cadence, '--page-size', '1', '--page-token', token]);
    assert.equal(second.code, EXIT_OK, second.err);
    const listed = [first.out, second.out].flatMap((out) => logins.filter((loginId) => out.includes(loginId)));
    assert.deepEqual(listed.sort(), [...logins].sort(), 'each login on one of the two pages');

    const ran = await cli(['book', 'run', '--cadence', cadence, '--page-size', '1', '--floor', '1', '--ceiling', '2', '--start', '1']);
    const refreshId = startedId(ran);
    assert.match(ran.out, new RegExp(`^started ${refreshId}, a refresh of the ${cadence} book of ${stack.customerId}`));
    assert.match(ran.out, new RegExp(`"connections book progress ${refreshId}" follows it`));

    // Its first workflow task counts the book: until then a query has no total to show.
    const progress = await waitFor(
      async () => {
        const result = await cli(['book', 'progress', refreshId]);
        return result.code === EXIT_OK && /done\s+\d+\/2/.test(result.out) ? result : undefined;
      },
      { describe: 'the progress with its total' },
    );
    assert.match(
      progress.out,
      new RegExp(`^book refresh ${refreshId}: (running|completed) \\(${cadence} book of ${stack.customerId}, night \\S+, page \\d+\\)`),
    );
    for (const line of [
      /done\s+\d+\/2 \(\d+%\)/,
      /in flight\s+\d+/,
      /window\s+\d+ \(floor 1, ceiling 2(; live path read at \S+: \d+ waiting, the oldest \d+ ms)?\)/,
      /refreshed\s+\d+/,
      /needs end user\s+0/,
      /failed\s+0/,
      /forgotten\s+0/,
      /malformed\s+0/,
      /estimated end\s+\S+/,
      /paused time\s+\d/,
      /drain time\s+\d/,
    ]) {
      assert.match(progress.out, line);
    }

    const report = await reportWhenEnded(refreshId);
    assert.match(report.out, new RegExp(`^book refresh ${refreshId}: completed`));
    assert.match(report.out, /done\s+2\/2 \(100%\)/);
    assert.match(report.out, /refreshed\s+2/);
    assert.match(report.out, /pages\s+[23] \(read one with --page 1\.\.[23]\)/);
    const done = await cli(['book', 'progress', refreshId]);
    assert.match(done.out, /: completed /, 'progress still answers once the refresh ended');

    const page = await cli(['book', 'report', refreshId, '--page', '1']);
    assert.equal(page.code, EXIT_OK, page.err);
    assert.match(page.out, new RegExp(`^page 1 of ${refreshId}: 1 login`));
    assert.match(page.out, /LOGIN\s+OUTCOME\s+DETAIL\s+TOOK\s+CONNECTION/);
    assert.match(page.out, new RegExp(`(${logins.join('|')})\\s+refreshed\\s+-\\s+\\d+\\.\\ds\\s+refresh-${stack.customerId}:`));
    const json = JSON.parse((await cli(['book', 'report', refreshId, '--page', '2', '--json'])).out) as { outcomes: Array<{ outcome: string }> };
    assert.deepEqual(
      json.outcomes.map((outcome) => outcome.outcome),
      ['refreshed'],
    );

    const refreshes = await waitFor(
      async () => {
        const result = await cli(['book', 'refreshes', '--cadence', cadence]);
        return result.out.includes(refreshId) ? result : undefined;
      },
      { describe: 'the refresh in the listing' },
    );
    assert.match(refreshes.out, /^REFRESH\s+CADENCE\s+STATUS\s+STARTED\s+CLOSED/);
    assert.match(refreshes.out, new RegExp(`${refreshId}\\s+${cadence}\\s+COMPLETED`));

    const removed = await cli(['book', 'remove', logins[0] ?? '']);
    assert.equal(removed.code, EXIT_OK, removed.err);
    assert.match(removed.out, /^removed login /);
    const missingPage = await cli(['book', 'report', refreshId, '--page', '9']);
    assert.equal(missingPage.code, EXIT_FAILED);
    assert.match(missingPage.err, /^connections book report: no book refresh "\S+-page-9" \("connections book refreshes" lists them\)$/);
  });

  void it('pauses a running refresh, pins and unpins its window, resumes it, refuses a report while it runs, then cancels it', async () => {
    const cadence = 'cli-steer';
    // Each connection waits out one 10 s poll: the refresh runs long enough to steer.
    await enrolled(cadence, 3, 1);
    const refreshId = startedId(await cli(['book', 'run', '--cadence', cadence, '--floor', '1', '--ceiling', '3', '--start', '1']));
    await waitFor(async () => (await client.books.progress(refreshId)).started >= 1, { describe: 'a first connection' });
    // Visibility knows it before `book run` is asked again (run finds a running refresh there).
    await waitFor(async () => new RegExp(`${refreshId}\\s+${cadence}\\s+RUNNING`).test((await cli(['book', 'refreshes', '--cadence', cadence])).out), {
      describe: 'the refresh listed as running',
    });

    const pinned = await cli(['book', 'resize', refreshId, '--size', '2']);
    assert.equal(pinned.code, EXIT_OK, pinned.err);
    assert.match(pinned.out, new RegExp(`^pinned the window at 2 for ${refreshId}`));
    assert.match(pinned.out, /window 2 \(floor 1, ceiling 3; pinned at 2(; live path read at [^)]*)?\): pinned by an operator at 2/);

    const paused = await cli(['book', 'pause', refreshId, '--reason', 'the test pauses']);
    assert.equal(paused.code, EXIT_OK, paused.err);
    assert.match(paused.out, new RegExp(`^paused ${refreshId}\\nbook refresh ${refreshId}: paused`));
    const again = await waitFor(
      async () => {
        const result = await cli(['book', 'run', '--cadence', cadence]);
        return result.out.startsWith('already running') ? result : undefined;
      },
      { describe: 'run to find the refresh running' },
    );
    assert.equal(startedId(again), refreshId, 'one refresh of a book at a time');
    const early = await cli(['book', 'report', refreshId]);
    assert.equal(early.code, EXIT_FAILED);
    assert.equal(
      early.err,
      `connections book report: ${refreshId} has not ended, so it has no report yet; "connections book progress ${refreshId}" says how far it is`,
    );

    const unpinned = await cli(['book', 'resize', refreshId, '--unpin']);
    assert.equal(unpinned.code, EXIT_OK, unpinned.err);
    assert.doesNotMatch(unpinned.out, /; pinned at/);
    const resumed = await cli(['book', 'resume', refreshId]);
    assert.equal(resumed.code, EXIT_OK, resumed.err);
    assert.match(resumed.out, new RegExp(`book refresh ${refreshId}: running`));

    const cancelled = await cli(['book', 'cancel', refreshId, '--reason', 'the test is done']);
    assert.equal(cancelled.code, EXIT_OK, cancelled.err);
    const report = await reportWhenEnded(refreshId);
    assert.match(report.out, new RegExp(`^book refresh ${refreshId}: cancelled`));
    assert.match(report.out, /paused time\s+\d+\.\ds/);
    assert.match(report.out, /window changes \(last \d+ of \d+\):[\s\S]*\d+ to 2: pinned by an operator at 2/);

    const refused = await cli(['book', 'pause', refreshId]);
    assert.equal(refused.code, EXIT_FAILED);
    // The server answers an update to a closed workflow as not found; either way one line, exit 1.
    assert.match(refused.err, new RegExp(`^connections book pause: (the refresh refused to pause: .+|no book refresh "${refreshId}" .+)$`));
  });

  void it("schedules and unschedules a book, and migrates a login's refresh schedule into it", async () => {
    const cadence = 'cli-sched';
    const scheduled = await cli([
      'book',
      'schedule',
      '--cadence',
      cadence,
      '--daily',
      '02:00',
      '--tz',
      'America/Toronto',
      '--floor',
      '1',
      '--ceiling',
      '3',
      '--page-size',
      '50',
      '--paused',
    ]);
    assert.equal(scheduled.code, EXIT_OK, scheduled.err);
    assert.match(
      scheduled.out,
      new RegExp(
        `^scheduled book-${stack.customerId}:${cadence}: daily 02:00 America/Toronto \\(jitter 15m\\), window floor 1, ceiling 3, page size 50 \\(paused\\)$`,
      ),
    );
    const described = await client.books.describeSchedule({ customerId: stack.customerId, cadence });
    assert.deepEqual([described.paused, described.pageSize, described.window], [true, 50, { floor: 1, ceiling: 3 }]);
    const rescheduled = await cli(['book', 'schedule', '--cadence', cadence, '--every', '6h']);
    assert.match(rescheduled.out, /^rescheduled .*: every 6h \(paused or not as before\)$/m);
    assert.equal((await client.books.describeSchedule({ customerId: stack.customerId, cadence })).paused, true, 'still paused');
    assert.match((await cli(['book', 'unschedule', '--cadence', cadence])).out, /^deleted the schedule of the cli-sched book/);
    assert.match((await cli(['book', 'unschedule', '--cadence', cadence])).out, /had no schedule$/);

    const loginId = await savedLogin(0);
    assert.equal((await cli(['refresh', 'schedule', loginId, '--every', '1h', '--paused', '--investments'])).code, EXIT_OK);
    const migrated = await waitFor(
      async () => {
        const result = await cli(['book', 'migrate', '--cadence', 'cli-migrated']);
        return result.out.includes(loginId) ? result : undefined;
      },
      { describe: 'the schedule found and migrated' },
    );
    assert.equal(migrated.code, EXIT_OK, migrated.err);
    assert.match(migrated.out, /^enrolled 1 login in the cli-migrated book of \S+; 1 per-login schedule deleted/);
    const entry = await client.books.entry({ customerId: stack.customerId, loginId });
    assert.deepEqual([entry.cadence, entry.products], ['cli-migrated', { investments: true }]);
    assert.match((await cli(['book', 'remove', loginId])).out, /^removed login /);
  });

  void it('exits 2 naming the flag on bad book arguments, and 1 with one line when a refresh is not found', async () => {
    const loginId = '11111111-2222-3333-4444-555555555555';
    const refreshId = `book-${stack.customerId}:nightly-2026-01-01T00:00:00Z`;
    const cases: Array<[string[], RegExp]> = [
      [['book', 'enrol'], /missing <loginId>/],
      [['book', 'enrol', 'not-a-uuid'], /<loginId>: must be a UUID/],
      [['book', 'enrol', loginId, '--cadence', 'Night Time'], /--cadence: must be lower-case letters/],
      [['book', 'enrol', loginId, '--session', 'live'], /--session must be cached or refresh/],
      [['book', 'enrol', loginId, '--days', '30', '--accounts'], /--days must be 90 or 365/],
      [['book', 'list', '--page-size', '0'], /--page-size: must be a whole number from 1 to 1000, got "0"/],
      [['book', 'list', '--page-size', 'ten'], /--page-size: must be a whole number/],
      [['book', 'list', '--bogus'], /Unknown option '--bogus'/],
      [['book', 'schedule'], /give exactly one of --daily and --every/],
      [['book', 'schedule', '--daily', '25:00'], /--daily: must be HH:MM on a 24-hour clock/],
      [['book', 'schedule', '--daily', '02:00', '--tz', 'Mars/Olympus'], /--time-zone: unknown time zone "Mars\/Olympus"/],
      [['book', 'schedule', '--every', '6h', '--tz', 'UTC'], /--time-zone applies to --daily/],
      [['book', 'schedule', '--every', '1h', '--floor', '9', '--ceiling', '3'], /--floor\/--ceiling: floor must be at most ceiling/],
      [['book', 'schedule', '--every', '1h', '--page-size', '5000'], /--page-size: must be a whole number from 1 to 1000/],
      [['book', 'run', '--start', '-1'], /--start/],
      [['book', 'run', '--cadence', 'UPPER'], /cadence: must be lower-case letters/],
      [['book', 'progress'], /missing <refreshId>/],
      [['book', 'progress', 'connection-x-1'], /<refreshId>: must be a book refresh's workflow id/],
      [['book', 'pause', refreshId, 'extra'], /unexpected argument "extra"/],
      [['book', 'resume', refreshId, '--reason', 'x'], /Unknown option '--reason'/],
      [['book', 'resize', refreshId], /give exactly one of --size and --unpin/],
      [['book', 'resize', refreshId, '--size', '2', '--unpin'], /give exactly one of --size and --unpin/],
      [['book', 'resize', refreshId, '--size', '0'], /--size: must be a whole number from 1 to 1000, got "0"/],
      [['book', 'report', refreshId, '--page', '0'], /--page: must be a whole number from 1/],
      [['book', 'frobnicate'], /unknown command "book frobnicate"/],
    ];
    for (const [args, message] of cases) {
      const result = await cli(args);
      assert.equal(result.code, EXIT_USAGE, `${args.join(' ')}: ${result.err}`);
      assert.match(result.err, message, args.join(' '));
    }
    const missing = await cli(['book', 'progress', refreshId]);
    assert.equal(missing.code, EXIT_FAILED);
    assert.equal(missing.err, `connections book progress: no book refresh "${refreshId}" ("connections book refreshes" lists them)`);
    for (const command of [
      'enrol',
      'remove',
      'list',
      'schedule',
      'unschedule',
      'run',
      'refreshes',
      'progress',
      'pause',
      'resume',
      'cancel',
      'resize',
      'report',
      'migrate',
    ]) {
      const help = await cli(['book', command, '--help']);
      assert.equal(help.code, EXIT_OK);
      assert.match(help.out, new RegExp(`^Usage: connections book ${command}`));
    }
    assert.match((await cli(['book'])).out, /enrol\s+enrol a saved login/);
  });
});

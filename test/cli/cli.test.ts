/**
 * The operator CLI against the whole stack (real dev server, worker, sandbox). Most tests call
 * `runCli` in-process with captured output; a few run the real entry point as a child process to
 * prove the exit codes and the environment settings.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { runCaptured, type Captured } from './cli-capture.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE } from '../../src/cli/report.js';
import { connectionKey, type ConnectionsClient } from '../../src/client/index.js';
import { SANDBOX_PASSWORD } from '../../sandbox/scenarios.js';
import { ANSWER_LIMITS } from '../../src/workflows/connection/challenges.js';
import { TEST_ENCRYPTION_ENV, type ConnectionStack } from '../helpers/connection-stack.js';
import { uniqueId, waitFor } from '../helpers/temporal.js';
import { startAwaiting as startAwaiting_, startClientStack, stopClientStack } from '../client/client-stack.js';
import { correctAnswer } from '../client/scenario-answers.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const run = promisify(execFile);

let env: TestWorkflowEnvironment;
let stack: ConnectionStack;
let client: ConnectionsClient;

before(async () => {
  ({ env, stack, client } = await startClientStack());
});

after(async () => {
  await stopClientStack({ stack, env });
});

function cli(args: string[], options: { env?: Record<string, string>; stdin?: string } = {}): Promise<Captured> {
  return runCaptured(args, { stack, client }, options);
}

function startAwaiting(username: string, institution: string): Promise<string> {
  return startAwaiting_(client, stack.customerId, username, institution);
}

void describe('the operator CLI', () => {
  void it('lists the connections awaiting an answer', async () => {
    const id = await startAwaiting('security_question', 'SandboxBank');
    const listed = await waitFor(
      async () => {
        const result = await cli(['list', '--customer', stack.customerId]);
        return result.out.includes(id) ? result : undefined;
      },
      { describe: 'the connection to be listed' },
    );
    assert.equal(listed.code, EXIT_OK);
    assert.match(listed.out, /^WORKFLOW ID\s+STATUS\s+INSTITUTION \/ LOGIN\s+CUSTOMER\s+STARTED/);
    assert.match(listed.out, new RegExp(`${id}\\s+AwaitingAnswer\\s+SandboxBank`));
    const json = await cli(['list', '--customer', stack.customerId, '--json']);
    assert.ok((JSON.parse(json.out) as Array<{ workflowId: string }>).some((c) => c.workflowId === id));
    await client.cancel(id);
  });

  void it('shows an image selection with its 16 images saved as PNG files', async () => {
    const id = await startAwaiting('image_selection', 'SandboxPictureBank');
    await client.answer(id, { responses: await correctAnswer(stack.sandboxUrl, 'image_selection', 0) });
    const shown = await cli(['show', id]);
    assert.equal(shown.code, EXIT_OK, shown.err);
    assert.match(shown.out, /\[1\] ImageSelection: Please select your personal security image/);
    const paths = [...shown.out.matchAll(/^\s+\d+\) (\S+\.png)$/gm)].map((match) => match[1] ?? '');
    assert.equal(paths.length, 16);
    const png = await readFile(paths[3] ?? '');
    assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    assert.match(shown.out, new RegExp(`To answer: connections answer ${id} --set \\d+ <answer 1>`));

    const answered = await cli(['answer', id, '4']);
    assert.equal(answered.code, EXIT_OK, answered.err);
    assert.match(answered.out, /answer accepted/);
    const watched = await cli(['watch', id, '--interval', '100']);
    assert.equal(watched.code, EXIT_OK, watched.err);
    assert.match(watched.out, /completed$/);
  });

  void it('answers choices by option number, then chooses new questions, and watches the connection complete', async () => {
    const id = await startAwaiting('reset_questions', 'SandboxCreditUnion');
    const shown = await cli(['show', id]);
    assert.match(shown.out, /\[1\] MultipleChoice: Which of these streets have you lived on\?\n\s+1\) Rue Sherbrooke\n\s+2\) Maple Avenue/);
    const setId = /--set (\S+)/.exec(shown.out)?.[1] ?? '';

    const first = await cli(['answer', id, '--set', setId, '2', '1,3']);
    assert.equal(first.code, EXIT_OK, first.err);
    assert.match(first.out, /answer accepted; the connection is now AwaitingAnswer/);
    assert.match(first.out, /The service asks more:/);
    assert.match(first.out, /\[3\] QuestionAndAnswer: Choose security question 3/);

    const second = await cli(['answer', id, '1:Civic', '2:Ace', '3:Dune']);
    assert.equal(second.code, EXIT_OK, second.err);
    const watched = await cli(['watch', id, '--interval', '100']);
    assert.equal(watched.code, EXIT_OK, watched.err);
    assert.match(watched.out, /Completed\s+polls \d+/);

    // Who did what: the start and both answers, with their outcome and the identity that sent them.
    const activity = await cli(['activity', id]);
    assert.equal(activity.code, EXIT_OK, activity.err);
    assert.match(activity.out, /^\S+Z {2}started +\S/m);
    assert.equal((activity.out.match(/update submitAnswer → accepted +\S+/g) ?? []).length, 2, activity.out);
    const entries = JSON.parse((await cli(['activity', id, '--json'])).out) as { action: string; who: string }[];
    assert.ok(
      entries.every((entry) => entry.who !== ''),
      'every action names who sent it',
    );
  });

  void it('refuses an answer that is not among the options, or past the size limit, before sending it', async () => {
    const id = await startAwaiting('reset_questions', 'SandboxCreditUnion');
    const refused = await cli(['answer', id, '9', '1']);
    assert.equal(refused.code, EXIT_FAILED);
    assert.match(
      refused.err,
      /answer refused \(checked before sending\): answer 1 \(MultipleChoice "Which of these streets have you lived on\?"\): 9 is not an option number \(1-4\)/,
    );
    const stale = await cli(['answer', id, '--set', 'old', '2', '1']);
    assert.equal(stale.code, EXIT_FAILED);
    assert.match(stale.err, /challenge set old is no longer current/);
    const oversized = await cli(['answer', id, '--prompt', 'Which of these streets have you lived on?', '--value', 'x'.repeat(ANSWER_LIMITS.answerChars + 1)]);
    assert.equal(oversized.code, EXIT_FAILED);
    assert.match(oversized.err, new RegExp(`the limit is ${ANSWER_LIMITS.answerChars} characters an answer`));
    const state = await client.getState(id);
    assert.equal(state.challengeSet?.attempt, 1, 'nothing reached the service');
    await client.cancel(id);
  });

  void it('answers with raw --prompt and --value pairs, and a trusted device with verified', async () => {
    const id = await startAwaiting('two_step_code', 'SandboxMobileBank');
    const phone = (await client.getState(id)).challengeSet?.challenges[0]?.Iterables?.[1] ?? '';
    const dry = await cli(['answer', id, '--dry-run', '--prompt', phone, '--value', 'Call']);
    assert.equal(dry.code, EXIT_OK, dry.err);
    assert.match(dry.out, /the answer fits the challenges \(not sent: --dry-run\)/);
    const first = await cli(['answer', id, '--prompt', phone, '--value', 'Call']);
    assert.equal(first.code, EXIT_OK, first.err);
    const code = await cli(['answer', id, '654321']);
    assert.equal(code.code, EXIT_OK, code.err);

    const device = await startAwaiting('trusted_device', 'SandboxDeviceBank');
    const shown = await cli(['show', device]);
    assert.match(shown.out, /note: ask the customer to approve this sign-in on their trusted device/);
    const verified = await cli(['answer', device, 'verified']);
    assert.equal(verified.code, EXIT_OK, verified.err);
    assert.equal((await cli(['watch', device, '--interval', '100'])).code, EXIT_OK);
  });

  void it('exits 1 with the failure type when a watched connection fails', async () => {
    const id = connectionKey(stack.customerId, uniqueId('bad-password'));
    const started = await cli(['start', '--key', id, '--institution', 'SandboxBank', '--username', 'invalid_password', '--password-stdin', '--accounts'], {
      stdin: `${SANDBOX_PASSWORD}\n`,
    });
    assert.equal(started.code, EXIT_FAILED);
    assert.match(started.err, /the connection ended: Failed \(InvalidCredentials \[INVALID_PASSWORD\]/);
    const watched = await cli(['watch', id]);
    assert.equal(watched.code, EXIT_FAILED);
    assert.match(watched.err, /ended: InvalidCredentials \[INVALID_PASSWORD\]/);
  });

  void it('starts a live connection with the password from the environment and prints its first challenges', async () => {
    const applicationId = uniqueId('app');
    const started = await cli(
      ['start', '--application-id', applicationId, '--institution', 'SandboxBank', '--username', 'security_question', '--accounts', '--days', '365'],
      {
        env: { CONNECTION_PASSWORD: SANDBOX_PASSWORD },
      },
    );
    assert.equal(started.code, EXIT_OK, started.err);
    const id = `connection-${stack.customerId}:${applicationId}`;
    assert.match(started.out, new RegExp(`^connection ${id}`));
    assert.match(started.out, /\[1\] QuestionAndAnswer: /);
    const again = await cli(['start', '--application-id', applicationId, '--institution', 'SandboxBank', '--username', 'security_question', '--accounts'], {
      env: { CONNECTION_PASSWORD: SANDBOX_PASSWORD },
    });
    assert.equal(again.code, EXIT_OK, 'the same key gives the same connection');
    await client.cancel(id);
    const watched = await cli(['watch', id]);
    assert.equal(watched.code, EXIT_FAILED);
    assert.match(watched.err, /ended: Cancelled/);
  });

  void it('exits 2 with a message naming the problem on usage errors', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['frobnicate'], /unknown command "frobnicate"/],
      [['show'], /missing <workflowId>/],
      [['list', '--status', 'Sleeping'], /--status must be one of/],
      [['list', '--bogus'], /Unknown option '--bogus'/],
      [['answer', 'wf-1'], /missing answers/],
      [['answer', 'wf-1', '1', '--prompt', 'p', '--value', 'v'], /either positional answers or --prompt\/--value pairs/],
      [['answer', 'wf-1', '--value', 'v'], /--value must follow the --prompt/],
      [['start', '--application-id', 'a1', '--login-id', '11111111-2222-3333-4444-555555555555'], /choose at least one product/],
      [
        ['start', '--application-id', 'a1', '--institution', 'SandboxBank', '--username', 'u', '--accounts'],
        /no password: pipe it with --password-stdin or set CONNECTION_PASSWORD/,
      ],
      [
        ['start', '--application-id', 'a b', '--login-id', '11111111-2222-3333-4444-555555555555', '--investments'],
        /applicationId must start with a letter or digit/,
      ],
      [['start', '--key', 'connection-x-1', '--login-id', 'nope', '--investments'], /session\.loginId: must be a UUID/],
      [['watch', 'wf-1', '--interval', 'soon'], /--interval must be milliseconds/],
    ];
    for (const [args, message] of cases) {
      const result = await cli(args);
      assert.equal(result.code, EXIT_USAGE, `${args.join(' ')}: ${result.err}`);
      assert.match(result.err, message, args.join(' '));
    }
  });

  void it('prints a help text for every command', async () => {
    for (const command of ['list', 'show', 'answer', 'watch', 'activity', 'start']) {
      const result = await cli([command, '--help']);
      assert.equal(result.code, EXIT_OK);
      assert.match(result.out, new RegExp(`^Usage: connections ${command}`));
    }
    const main = await cli(['--help']);
    assert.match(main.out, /Exit codes: 0 ok, 1 connection failed, answer rejected, schedule refused or forget failed, 2 usage error/);
  });

  void it('runs as a program: reads the environment and sets the exit code', async () => {
    const id = await startAwaiting('security_question', 'SandboxBank');
    const childEnv = {
      ...process.env,
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_NAMESPACE: env.namespace ?? 'default',
      TEMPORAL_TASK_QUEUE: stack.taskQueue,
      ...TEST_ENCRYPTION_ENV,
    };
    const shown = await run(process.execPath, ['--import', 'tsx', MAIN, 'show', id], { env: childEnv });
    assert.match(shown.stdout, new RegExp(`Connection ${id}: AwaitingAnswer`));
    await assert.rejects(
      run(process.execPath, ['--import', 'tsx', MAIN, 'list', '--status', 'Sleeping'], { env: childEnv }),
      (error: { code?: number; stderr?: string }) => {
        assert.equal(error.code, EXIT_USAGE);
        assert.match(error.stderr ?? '', /--status must be one of/);
        return true;
      },
    );
    await assert.rejects(
      run(process.execPath, ['--import', 'tsx', MAIN, 'show', 'connection-nobody-here'], { env: childEnv }),
      (error: { code?: number; stderr?: string }) => {
        assert.equal(error.code, EXIT_FAILED);
        assert.match(error.stderr ?? '', /no connection "connection-nobody-here"/);
        return true;
      },
    );
    await client.cancel(id);
  });
});

void describe('scheduled refresh and forgetting from the CLI', () => {
  /** Polls `refresh latest` until the login's latest run is a scheduled one that ended. */
  async function latestScheduledRun(loginId: string): Promise<string> {
    return waitFor(
      async () => {
        const latest = await cli(['refresh', 'latest', loginId]);
        return latest.code === EXIT_OK && /scheduled run/.test(latest.out) && !/outcome: running/.test(latest.out) ? latest.out : undefined;
      },
      { timeoutMs: 30_000, describe: `a finished scheduled run of ${loginId}` },
    );
  }

  void it('schedules a saved login, lists it, pauses, triggers, resumes and deletes its schedule', async () => {
    const loginId = await stack.savedLogin('no_mfa');
    const scheduled = await cli(['refresh', 'schedule', loginId, '--every', '2s', '--note', 'cli test']);
    assert.equal(scheduled.code, EXIT_OK, scheduled.err);
    assert.match(scheduled.out, new RegExp(`^scheduled refresh-${stack.customerId}:${loginId}: cached refresh every 2s`));

    const listed = await waitFor(
      async () => {
        const result = await cli(['refresh', 'list']);
        return result.out.includes(loginId) ? result : undefined;
      },
      { describe: 'the schedule in the listing' },
    );
    assert.match(listed.out, /^LOGIN\s+CADENCE\s+PAUSED\s+NEXT RUN\s+LAST RUN/);
    assert.match(listed.out, new RegExp(`${loginId}\\s+cached every 2s\\s+no\\s+\\d{4}-`));

    const paused = await cli(['refresh', 'pause', loginId, '--note', 'held by the test']);
    assert.equal(paused.code, EXIT_OK, paused.err);
    assert.equal((await client.schedules.describe({ customerId: stack.customerId, loginId })).note, 'held by the test');
    assert.match((await cli(['refresh', 'list'])).out, new RegExp(`${loginId}\\s+cached every 2s\\s+yes\\s+-`));

    // Paused, a trigger still runs once: the cached connection completes.
    const triggered = await cli(['refresh', 'trigger', loginId]);
    assert.equal(triggered.code, EXIT_OK, triggered.err);
    const latest = await latestScheduledRun(loginId);
    assert.match(latest, new RegExp(`^refresh-${stack.customerId}:${loginId}-\\S+ \\(scheduled run\\)`));
    assert.match(latest, /outcome: completed/);
    const json = JSON.parse((await cli(['refresh', 'list', '--json'])).out) as Array<{
      loginId: string;
      paused: boolean;
      latest: { outcome: { kind: string } } | null;
    }>;
    assert.equal(json.find((row) => row.loginId === loginId)?.latest?.outcome.kind, 'completed');

    assert.equal((await cli(['refresh', 'resume', loginId])).code, EXIT_OK);
    assert.equal((await client.schedules.describe({ customerId: stack.customerId, loginId })).paused, false);
    const deleted = await cli(['refresh', 'delete', loginId]);
    assert.equal(deleted.code, EXIT_OK, deleted.err);
    assert.match(deleted.out, /deleted the refresh schedule/);
    assert.match((await cli(['refresh', 'delete', loginId])).out, /had no refresh schedule/);
    const gone = await cli(['refresh', 'pause', loginId]);
    assert.equal(gone.code, EXIT_FAILED);
    assert.match(gone.err, /no refresh schedule/);
  });

  void it('forgets a login, printing what was deleted, and forgetting it again succeeds', async () => {
    const loginId = await stack.savedLogin('no_mfa');
    assert.equal((await cli(['refresh', 'schedule', loginId, '--daily', '02:30', '--time-zone', 'America/Toronto', '--paused'])).code, EXIT_OK);
    const forgot = await cli(['forget', loginId]);
    assert.equal(forgot.code, EXIT_OK, forgot.err);
    assert.match(forgot.out, new RegExp(`^forgot login ${loginId} of ${stack.customerId} \\(\\S+ to \\S+\\)`));
    assert.match(forgot.out, /schedule\s+deleted/);
    assert.match(forgot.out, /card\s+deleted/);
    assert.match(forgot.out, /histories\s+\d+ connections? deleted/);

    const again = await cli(['forget', loginId, '--json']);
    assert.equal(again.code, EXIT_OK, again.err);
    const record = JSON.parse(again.out) as { schedule: string; card: string };
    assert.equal(record.schedule, 'none');
    assert.equal(record.card, 'not-found');
  });

  void it('exits 2 naming the flag on bad refresh and forget arguments', async () => {
    const loginId = '11111111-2222-3333-4444-555555555555';
    const cases: Array<[string[], RegExp]> = [
      [['refresh', 'schedule', loginId, '--every', '0s'], /--every: must be at least 1s/],
      [['refresh', 'schedule', loginId, '--every', 'soon'], /--every: must be a duration such as 90s/],
      [['refresh', 'schedule', loginId, '--daily', '25:00'], /--daily: must be HH:MM on a 24-hour clock/],
      [['refresh', 'schedule', loginId, '--daily', '02:00', '--time-zone', 'Mars/Olympus'], /--time-zone: unknown time zone "Mars\/Olympus"/],
      [['refresh', 'schedule', loginId, '--every', '1h', '--daily', '02:00'], /give exactly one of --every and --daily/],
      [['refresh', 'schedule', loginId], /give exactly one of --every and --daily/],
      [['refresh', 'schedule', loginId, '--every', '1h', '--jitter', '2h'], /--jitter: must not be longer than the interval/],
      [['refresh', 'schedule', loginId, '--every', '1h', '--session', 'live'], /--session must be cached or refresh/],
      [['refresh', 'schedule', 'not-a-uuid', '--every', '1h'], /<loginId>: must be a UUID/],
      [['refresh', 'pause'], /missing <loginId>/],
      [['refresh', 'trigger', loginId, '--note', 'x'], /Unknown option '--note'/],
      [['refresh', 'frobnicate'], /unknown command "refresh frobnicate"/],
      [['forget', 'not-a-uuid'], /loginId: must be a UUID/],
    ];
    for (const [args, message] of cases) {
      const result = await cli(args);
      assert.equal(result.code, EXIT_USAGE, `${args.join(' ')}: ${result.err}`);
      assert.match(result.err, message, args.join(' '));
    }
    for (const command of [['refresh', 'schedule'], ['refresh', 'list'], ['refresh', 'latest'], ['forget']]) {
      const help = await cli([...command, '--help']);
      assert.match(help.out, new RegExp(`^Usage: connections ${command.join(' ')}`));
    }
    assert.match((await cli(['refresh'])).out, /schedule\s+schedule \(or replace\)/);
  });
});

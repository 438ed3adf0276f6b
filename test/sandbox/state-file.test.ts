/**
 * The sandbox's state file (options.stateFile, SANDBOX_STATE_FILE): a sandbox started again on the
 * file it was stopped with, or killed with SIGKILL right after an answer, knows everything it told
 * its clients: saved logins, sessions awaiting an answer (their RequestIds), operations and how far
 * they got, attempt and submission counts. A file it cannot read stops its start, naming the file.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { AccountsDetailResponse, AuthorizeResponse, PendingResponse } from '../../src/aggregator/schemas.js';
import { describeScenario, resolveScenario } from '../../sandbox/scenarios.js';
import { createSandbox, type Sandbox, type SandboxOptions } from '../../sandbox/server.js';
import { MIN_WRITE_INTERVAL_MS, STATE_FILE_VERSION, StateFileError } from '../../sandbox/state-file.js';
import { freePort } from '../../scripts/lib/free-port.js';
import { assertError, authorizeLive, cachedSession, clientFor, freshTenant, parsesWith, type Call } from './helpers.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'sandbox-state-'));
after(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
const freshFile = () => join(dir, `state-${++files}.json`);

const open: Sandbox[] = [];
after(async () => Promise.all(open.map((sandbox) => sandbox.close().catch(() => undefined))));

async function startOn(stateFile: string, more: Partial<SandboxOptions> = {}): Promise<{ sandbox: Sandbox; call: Call }> {
  const sandbox = await createSandbox({ stateFile, ...more });
  open.push(sandbox);
  return { sandbox, call: clientFor(sandbox) };
}

const byName = (username: string) => {
  const entry = resolveScenario(username);
  assert.ok(entry, username);
  return describeScenario(entry);
};
const authorize = (tenant: string) => `/v3/${tenant}/BankingServices/Authorize`;
const detail = (tenant: string) => `/v3/${tenant}/BankingServices/GetAccountsDetail`;
const detailAsync = (tenant: string, requestId: string) => `/v3/${tenant}/BankingServices/GetAccountsDetailAsync/${requestId}`;
const live = (username: string, save = true) => {
  const scenario = byName(username);
  return { Institution: scenario.institution, Username: scenario.username, Password: scenario.password, MostRecentCached: false, Save: save };
};

describe('a sandbox started again on its state file', () => {
  it('keeps a saved login, a session awaiting an answer and a pending operation where they were', async () => {
    const file = freshFile();
    const tenant = freshTenant('restart');
    const first = await startOn(file);
    // A saved login (its whole live flow), a challenge left unanswered, and accounts detail pending
    // for 3 polls of which 2 were made.
    const saved = await authorizeLive(first.call, tenant, byName('security_question'));
    const waiting = await first.call('POST', authorize(tenant), live('image_selection'));
    assert.equal(waiting.status, 203, waiting.text);
    const challenge = parsesWith(AuthorizeResponse, waiting.body);
    const pending = await cachedSession(first.call, tenant, 'pending_polls_3');
    parsesWith(PendingResponse, (await first.call('POST', detail(tenant), { RequestId: pending.requestId })).body);
    parsesWith(PendingResponse, (await first.call('GET', detailAsync(tenant, pending.requestId))).body);
    // The first of retry_later_2's two failing attempts: the count survives too.
    assertError(await first.call('POST', authorize(tenant), live('retry_later_2')), 401, 'RETRY_LATER');
    const submissions = first.sandbox.authorizeSubmissions(tenant);
    await first.sandbox.close();

    const second = await startOn(file);
    assert.deepEqual(second.sandbox.authorizeSubmissions(tenant), submissions, 'the Authorize submission counts');
    // A cached Authorize on the saved LoginId opens a session (not 401 INVALID_LOGIN).
    const cached = await second.call('POST', authorize(tenant), { LoginId: saved.Login?.Id, MostRecentCached: true });
    assert.equal(cached.status, 200, cached.text);
    const reopened = parsesWith(AuthorizeResponse, cached.body);
    assert.equal(reopened.Login?.Id, saved.Login?.Id);
    // Its RequestId is new: the tenant's counter went on from where it was, never reissuing an old one.
    assert.ok(![saved.RequestId, challenge.RequestId, pending.requestId].includes(reopened.RequestId), 'a RequestId issued again');
    // The challenge is answered with the RequestId of before the restart: the next round follows.
    const answered = await second.call('POST', authorize(tenant), {
      RequestId: challenge.RequestId,
      SecurityResponses: byName('image_selection').challengeSequence[0]?.answer,
    });
    assert.equal(answered.status, 203, answered.text.slice(0, 300));
    assert.equal(parsesWith(AuthorizeResponse, answered.body).RequestId, challenge.RequestId);
    // The operation had 2 of its 3 pending answers: one more, then its data.
    parsesWith(PendingResponse, (await second.call('GET', detailAsync(tenant, pending.requestId))).body);
    const data = await second.call('GET', detailAsync(tenant, pending.requestId));
    assert.equal(data.status, 200, data.text.slice(0, 300));
    assert.ok(parsesWith(AccountsDetailResponse, data.body).Accounts.length > 0);
    // The second failing attempt, then success: the attempt count was kept.
    assertError(await second.call('POST', authorize(tenant), live('retry_later_2')), 401, 'RETRY_LATER');
    assert.equal((await second.call('POST', authorize(tenant), live('retry_later_2'))).status, 200);
  });

  it('expires a session idle past sessionIdleMs across the restart, on the sandbox clock', async () => {
    const file = freshFile();
    const tenant = freshTenant('idle');
    let clock = Date.parse('2026-11-02T09:00:00Z');
    const options = { now: () => clock, sessionIdleMs: 60_000 };
    const first = await startOn(file, options);
    const stale = parsesWith(AuthorizeResponse, (await first.call('POST', authorize(tenant), live('security_question'))).body);
    clock += 50_000;
    const fresh = parsesWith(AuthorizeResponse, (await first.call('POST', authorize(tenant), live('security_question'))).body);
    await first.sandbox.close();

    clock += 20_000;
    const second = await startOn(file, options);
    const answer = byName('security_question').challengeSequence[0]?.answer;
    assertError(await second.call('POST', authorize(tenant), { RequestId: stale.RequestId, SecurityResponses: answer }), 400, 'SESSION_NONEXISTENT');
    assert.equal((await second.call('POST', authorize(tenant), { RequestId: fresh.RequestId, SecurityResponses: answer })).status, 200);
  });

  it('starts empty on a missing file and creates it', async () => {
    const file = join(dir, 'not-yet', 'state.json');
    const { sandbox } = await startOn(file);
    const written = JSON.parse(readFileSync(file, 'utf8')) as { version: number; tenants: unknown[] };
    assert.equal(written.version, STATE_FILE_VERSION);
    assert.deepEqual(written.tenants, []);
    assert.equal(sandbox.state.tenants.size, 0);
  });

  it('refuses to start on a corrupt file, naming the file and what is wrong, and leaves it as it was', async () => {
    const cases: [string, string, RegExp][] = [
      ['not JSON', '{"format": "aggregation-sandbox-', /is not JSON/],
      ['another JSON file', '{"name": "aggregation-connections"}', /is not a sandbox state file/],
      [
        'another version',
        JSON.stringify({ format: 'aggregation-sandbox-state', version: 99, tenants: [] }),
        /is of version 99, and this sandbox reads version 1 only/,
      ],
      [
        'a bad member',
        JSON.stringify({ format: 'aggregation-sandbox-state', version: 1, instance: 'x', savedAt: '', tenants: [{ id: 'a' }] }),
        /does not hold a valid state: tenants\[0\]\.sequence/,
      ],
    ];
    for (const [what, text, problem] of cases) {
      const file = freshFile();
      writeFileSync(file, text);
      await assert.rejects(createSandbox({ stateFile: file }), (error: unknown) => {
        assert.ok(error instanceof StateFileError, `${what}: ${String(error)}`);
        assert.equal(error.file, file);
        assert.ok(error.message.startsWith(`sandbox state file ${file}: `), error.message);
        assert.match(error.message, problem, what);
        return true;
      });
      assert.equal(readFileSync(file, 'utf8'), text, `${what}: the file was changed`);
    }
  });

  it('writes a burst of requests in a few writes, each answer after the write holding it (write cost printed)', async () => {
    const file = freshFile();
    const tenant = freshTenant('burst');
    const { sandbox, call } = await startOn(file);
    const before = sandbox.stateFileStats()?.writes ?? 0;
    const startedAt = performance.now();
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => call('POST', authorize(tenant), live(`pending_polls_${i + 1}`))));
    const elapsed = performance.now() - startedAt;
    const stats = sandbox.stateFileStats();
    assert.ok(stats);
    assert.ok(answers.every((answer) => answer.status === 200));
    const writes = stats.writes - before;
    // At most one write an interval, and the first at once (how many fit depends on the machine's speed: a bound, not a count).
    assert.ok(writes <= Math.ceil(elapsed / MIN_WRITE_INTERVAL_MS) + 1, `${writes} writes in ${elapsed.toFixed(0)} ms`);
    assert.ok(writes < answers.length, `${writes} writes for ${answers.length} requests`);
    // The last answer was sent after the file held it: every session answered is in the file now.
    const held = new Set(
      (JSON.parse(readFileSync(file, 'utf8')) as { tenants: { sessions: { requestId: string }[] }[] }).tenants.flatMap((t) =>
        t.sessions.map((s) => s.requestId),
      ),
    );
    for (const answer of answers) assert.ok(held.has(parsesWith(AuthorizeResponse, answer.body).RequestId));
    console.log(
      `sandbox state file: 200 concurrent Authorize in ${elapsed.toFixed(0)} ms took ${writes} writes; ` +
        `the last of ${stats.bytes} bytes (200 logins and sessions) in ${stats.lastWriteMs.toFixed(2)} ms, ${(stats.totalWriteMs / stats.writes).toFixed(2)} ms a write on average`,
    );
  });

  it('keeps nothing without a state file, as before', async () => {
    const sandbox = await createSandbox();
    open.push(sandbox);
    assert.equal(sandbox.options.stateFile, undefined);
    assert.equal(sandbox.stateFileStats(), undefined);
  });
});

// ---- a sandbox process killed with SIGKILL ------------------------------------------------------

interface SandboxProcess {
  readonly child: ChildProcess;
  readonly url: string;
  readonly exited: Promise<void>;
}

/** `npm run sandbox` as its own process (node + tsx, no npm or shell between: a SIGKILL reaches it). */
async function startProcess(stateFile: string): Promise<SandboxProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'sandbox/main.ts'], {
    cwd: ROOT,
    // A bare environment: a developer's own SANDBOX_* variables must not change the sandbox under test.
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TMPDIR: process.env.TMPDIR,
      SANDBOX_HOST: '127.0.0.1',
      SANDBOX_PORT: String(port),
      SANDBOX_STATE_FILE: stateFile,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the sandbox was not listening within 30 s:\n${output}`)), 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (!output.includes('sandbox listening on')) return;
      clearTimeout(timer);
      resolve();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the sandbox exited during start-up (${signal ?? `code ${code}`}):\n${output}`));
    });
  });
  return { child, url: `http://127.0.0.1:${port}`, exited };
}

const processes: SandboxProcess[] = [];
after(() => {
  for (const { child } of processes) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

describe('a sandbox process killed with SIGKILL right after an answer', () => {
  it('loses nothing it answered: the saved login, the open sessions, every session of a burst answered before the kill', async () => {
    const file = freshFile();
    const tenant = freshTenant('sigkill');
    const first = await startProcess(file);
    processes.push(first);
    const post = (url: string, path: string, body: unknown) =>
      fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

    // A live flow with a challenge, answered and saved: the last answer is the last word before a burst.
    const started = parsesWith(AuthorizeResponse, await (await post(first.url, authorize(tenant), live('security_question'))).json());
    const saved = parsesWith(
      AuthorizeResponse,
      await (
        await post(first.url, authorize(tenant), { RequestId: started.RequestId, SecurityResponses: byName('security_question').challengeSequence[0]?.answer })
      ).json(),
    );
    assert.equal(saved.HttpStatusCode, 200);

    // 100 concurrent Authorize of distinct logins; SIGKILL the moment the first answer is in.
    let killed = false;
    const told = (
      await Promise.allSettled(
        Array.from({ length: 100 }, async (_, i) => {
          const response = await post(first.url, authorize(tenant), live(`pending_polls_${i + 1}`));
          if (!killed) {
            killed = true;
            first.child.kill('SIGKILL');
          }
          return parsesWith(AuthorizeResponse, await response.json());
        }),
      )
    ).flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
    if (!killed) first.child.kill('SIGKILL');
    await first.exited;
    assert.equal(first.child.signalCode, 'SIGKILL');
    assert.ok(told.length >= 1, 'no answer came back before the kill');

    const second = await startProcess(file);
    processes.push(second);
    const call = clientFor({ url: second.url } as Sandbox);
    const cached = await call('POST', authorize(tenant), { LoginId: saved.Login?.Id, MostRecentCached: true });
    assert.equal(cached.status, 200, `the saved login: ${cached.text}`);
    assert.equal((await call('POST', detail(tenant), { RequestId: saved.RequestId })).status, 202, 'the session opened by the answer');
    for (const answer of told) {
      const data = await call('POST', detail(tenant), { RequestId: answer.RequestId });
      assert.equal(data.status, 202, `${answer.Login?.Username}'s session: ${data.text.slice(0, 200)}`);
      const again = await call('POST', authorize(tenant), { LoginId: answer.Login?.Id, MostRecentCached: true });
      assert.equal(again.status, 200, `${answer.Login?.Username}'s saved login: ${again.text.slice(0, 200)}`);
    }
    console.log(
      `sandbox state file: killed with SIGKILL after the first of 100 concurrent answers; ${told.length} had arrived, all ${told.length} known after the restart`,
    );
    second.child.kill('SIGTERM');
    await second.exited;
  });
});

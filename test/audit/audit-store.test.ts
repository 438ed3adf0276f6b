/**
 * The audit trail's two stores hold the same contract (src/audit): an attempt pairs with its outcome,
 * an attempt with none reads back as unknown, a tenant and a time range select, oldest first, and
 * both survive their process. The file: mode 0600, whole lines from two writers at once, a torn last
 * line ignored, a changed line named. PostgreSQL (a real cluster): UPDATE, DELETE and TRUNCATE
 * refused, a row written by hand named, a database that is down named without its password. The
 * CLI's `audit` reads either.
 */
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { AuditActor } from '../../src/audit/audit-entry.js';
import { AuditRecordInvalidError, AuditUnavailableError, type AuditStore } from '../../src/audit/audit-store.js';
import { AuditTrail } from '../../src/audit/audit-trail.js';
import { FileAuditStore } from '../../src/audit/file-audit-store.js';
import { PostgresAuditStore } from '../../src/audit/postgres-audit-store.js';
import { runCli } from '../../src/cli/run-cli.js';
import { PostgresCluster, postgresBinDir } from '../../scripts/prod-check/postgres.js';
import { loadTestConfig } from '../../scripts/lib/test-settings.js';

const ALICE: AuditActor = { subject: 'alice', name: 'Alice Operator', via: 'oidc' };
const missingPostgres = postgresBinDir() ? undefined : 'PostgreSQL (apt-get install -y postgresql)';
if (missingPostgres && loadTestConfig().ci) throw new Error(`the audit store test cannot run in CI: missing ${missingPostgres}`);

/** The contract both stores hold, on a fresh store `open()` makes (and again, for a restart). */
async function holdsTheContract(open: () => AuditStore): Promise<void> {
  const trail = new AuditTrail(open());
  const before = new Date(Date.now() - 1_000);
  const answer = await trail.begin({ actor: ALICE, action: 'answer', tenant: 'lender-a', target: 'connection-lender-a:app-1' });
  await answer.end('ok', 'accepted');
  await trail.record({ actor: ALICE, action: 'cancel', tenant: 'lender-b', target: 'connection-lender-b:app-2' }, 'refused', 'Forbidden');
  // The process ends between the attempt and its outcome: it reads back as unknown.
  await trail.begin({ actor: ALICE, action: 'decode', tenant: 'lender-a', detail: 'multi\nline   detail' });
  await trail.close();

  const reopened = new AuditTrail(open());
  try {
    const all = await reopened.query({ limit: 100 });
    assert.deepEqual(
      all.map((entry) => [entry.action, entry.tenant, entry.outcome, entry.outcomeDetail, entry.detail]),
      [
        ['answer', 'lender-a', 'ok', 'accepted', null],
        ['cancel', 'lender-b', 'refused', 'Forbidden', null],
        ['decode', 'lender-a', 'unknown', null, 'multi line detail'],
      ],
    );
    assert.deepEqual(all[0]?.actor, ALICE);
    assert.ok(all[0]?.endedAt && Date.parse(all[0].endedAt) >= Date.parse(all[0].at));
    assert.deepEqual(
      (await reopened.query({ tenant: 'lender-a', limit: 100 })).map((entry) => entry.action),
      ['answer', 'decode'],
    );
    assert.deepEqual(
      (await reopened.query({ tenant: 'lender-a', limit: 1 })).map((entry) => entry.action),
      ['answer'],
      'oldest first, at most the limit',
    );
    assert.equal((await reopened.query({ from: new Date(Date.now() + 60_000), limit: 100 })).length, 0);
    assert.equal((await reopened.query({ from: before, to: new Date(Date.now() + 60_000), limit: 100 })).length, 3);
    assert.equal((await reopened.query({ tenant: 'lender-c', limit: 100 })).length, 0);
  } finally {
    await reopened.close();
  }
}

describe('the audit trail in a file', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'audit-file-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('pairs attempts with outcomes, selects by tenant and time, and survives a restart; mode 0600', async () => {
    const path = join(dir, 'contract', 'audit.jsonl');
    await holdsTheContract(() => new FileAuditStore(path));
    assert.equal(statSync(path).mode & 0o777, 0o600);
  });

  it('keeps whole lines when two writers append at once', async () => {
    const path = join(dir, 'two-writers.jsonl');
    const [one, two] = [new AuditTrail(new FileAuditStore(path)), new AuditTrail(new FileAuditStore(path))];
    await Promise.all(
      Array.from({ length: 100 }, (_, index) =>
        (index % 2 ? one : two).record({ actor: ALICE, action: 'answer', tenant: 'lender-a', target: `connection-${index}`, detail: 'x'.repeat(400) }, 'ok'),
      ),
    );
    await Promise.all([one.close(), two.close()]);
    const entries = await new FileAuditStore(path).query({ limit: 1_000 });
    assert.equal(entries.length, 100);
    assert.ok(entries.every((entry) => entry.outcome === 'ok'));
  });

  it('ignores a line torn by a crash, and names a changed one by its line number', async () => {
    const path = join(dir, 'torn.jsonl');
    const trail = new AuditTrail(new FileAuditStore(path));
    await trail.record({ actor: ALICE, action: 'cancel', tenant: 'lender-a' }, 'ok');
    await trail.close();
    appendFileSync(path, '{"kind":"attempt","id":"');
    assert.equal((await new FileAuditStore(path).query({ limit: 10 })).length, 1, 'the torn line is not an entry');
    const lines = readFileSync(path, 'utf8').split('\n');
    writeFileSync(path, `${lines[0]}\n${(lines[1] ?? '').replace('"ok"', '"approved"')}\n`);
    await assert.rejects(
      new FileAuditStore(path).query({ limit: 10 }),
      (error: unknown) => error instanceof AuditRecordInvalidError && /line 2/.test(error.message) && /outcome/.test(error.message),
    );
  });

  it('fails with AuditUnavailableError, naming the file, when it cannot write', async () => {
    const trail = new AuditTrail(new FileAuditStore(join(process.execPath, 'audit.jsonl')));
    await assert.rejects(
      trail.begin({ actor: ALICE, action: 'answer' }),
      (error: unknown) => error instanceof AuditUnavailableError && error.message.includes(`file:${process.execPath}/audit.jsonl`),
    );
  });

  it("is what the CLI's audit command prints, as a table or JSON lines, and records the read", async () => {
    const path = join(dir, 'cli.jsonl');
    const trail = new AuditTrail(new FileAuditStore(path));
    await trail.record({ actor: ALICE, action: 'answer', tenant: 'lender-a', target: 'connection-lender-a:app-9' }, 'ok', 'accepted');
    await trail.close();
    const run = async (...args: string[]) => runWith({ AUDIT_STORE: `file:${path}` }, ...args);
    const runWith = async (env: NodeJS.ProcessEnv, ...args: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runCli(['audit', ...args], {
        out: (line) => out.push(line),
        err: (line) => err.push(line),
        readStdin: () => Promise.resolve(''),
        env,
        connect: () => Promise.reject(new Error('the audit command needs no Temporal')),
        now: () => Date.now(),
        sleep: () => Promise.resolve(),
      });
      return { code, out: out.join('\n'), err: err.join('\n') };
    };
    const table = await run('--customer', 'lender-a');
    assert.equal(table.code, 0, table.err);
    assert.match(table.out, /^AT\s+WHO\s+ACTION\s+TENANT\s+TARGET\s+OUTCOME$/m);
    assert.match(table.out, /Alice Operator\s+answer\s+lender-a\s+connection-lender-a:app-9\s+ok: accepted/);
    const lines = await run('--jsonl');
    const entries = lines.out.split('\n').map((text) => JSON.parse(text) as { action: string; actor: { via: string } });
    assert.deepEqual(
      entries.map((entry) => entry.action),
      ['answer', 'audit.read'],
      'the first read is recorded; the second leaves its own out',
    );
    assert.equal(entries[1]?.actor.via, 'cli');
    const bad = await run('--from', 'yesterday');
    assert.equal(bad.code, 2);
    assert.match(bad.err, /--from: must be an ISO 8601 time/);
    const badLimit = await run('--limit', '0');
    assert.match(badLimit.err, /--limit: must be a whole number from 1 to 10000/);
    // A command that acts is recorded before it runs, never with its flags' values; one the trail
    // cannot record never runs (it would have connected to Temporal).
    let connects = 0;
    const acting = async (env: NodeJS.ProcessEnv, ...args: string[]) => {
      const err: string[] = [];
      const code = await runCli(args, {
        out: () => undefined,
        err: (line) => err.push(line),
        readStdin: () => Promise.resolve(''),
        env,
        connect: () => {
          connects += 1;
          return Promise.reject(new Error('Temporal is not there in this test'));
        },
        now: () => Date.now(),
        sleep: () => Promise.resolve(),
      });
      return { code, err: err.join('\n') };
    };
    const answered = await acting(
      { AUDIT_STORE: `file:${path}`, TEMPORAL_CLIENT_IDENTITY: 'ops:jo' },
      'answer',
      'connection-lender-a:app-9',
      '--prompt',
      'City?',
      '--value',
      'secret-answer-text',
    );
    assert.equal(answered.code, 1, answered.err);
    assert.equal(connects, 1);
    const [recorded] = (await new FileAuditStore(path).query({ limit: 100 })).filter((entry) => entry.action === 'answer' && entry.actor.via === 'cli');
    assert.deepEqual(
      [recorded?.actor.name, recorded?.tenant, recorded?.target, recorded?.detail, recorded?.outcome, recorded?.outcomeDetail],
      ['ops:jo', 'lender-a', 'connection-lender-a:app-9', 'cli answer', 'failed', 'exit 1'],
    );
    assert.ok(!readFileSync(path, 'utf8').includes('secret-answer-text'), "a flag's value is never recorded");
    const unrecorded = await acting({ AUDIT_STORE: `file:${process.execPath}/audit.jsonl` }, 'tenant', 'forget', 'lender-a', '--yes');
    assert.equal(unrecorded.code, 1);
    assert.match(unrecorded.err, /tenant forget: refused: the audit trail at file:.* is unavailable: .*; nothing was done, as nothing can be recorded/);
    assert.equal(connects, 1, 'the unrecorded command never reached Temporal');

    const badStore = await runWith({ AUDIT_STORE: 'mysql://x' });
    assert.notEqual(badStore.code, 0);
    assert.match(badStore.err, /AUDIT_STORE: must be file:<path> or a postgres:\/\/ address \(got mysql:\/\/\)/);
  });
});

describe('the audit trail in PostgreSQL', { skip: missingPostgres ? `missing: ${missingPostgres}` : false }, () => {
  let dir: string;
  let postgres: PostgresCluster;
  let url: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'audit-pg-'));
    postgres = await PostgresCluster.create(dir);
    await postgres.start();
    await postgres.sql('postgres', 'CREATE DATABASE audit');
    url = `postgres://postgres:secret-password@${postgres.host}:${postgres.port}/audit`;
  });
  after(async () => {
    await postgres?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('pairs attempts with outcomes, selects by tenant and time, and survives a restart', async () => {
    await holdsTheContract(() => new PostgresAuditStore(url));
  });

  it('refuses UPDATE, DELETE and TRUNCATE, whoever sends them, and names a row written by hand', async () => {
    for (const statement of ["UPDATE audit_outcomes SET outcome = 'ok'", 'DELETE FROM audit_attempts', 'TRUNCATE audit_outcomes, audit_attempts']) {
      await assert.rejects(postgres.sql('audit', statement), /the audit trail is append-only/, statement);
    }
    await postgres.sql(
      'audit',
      "INSERT INTO audit_attempts (id, at, actor_subject, actor_name, actor_via, action) VALUES (gen_random_uuid(), now(), 'mallory', 'Mallory', 'oidc', 'approve-loan')",
    );
    const store = new PostgresAuditStore(url);
    try {
      await assert.rejects(
        store.query({ limit: 100 }),
        (error: unknown) => error instanceof AuditRecordInvalidError && /audit_attempts seq \d+/.test(error.message) && /action/.test(error.message),
      );
    } finally {
      await store.close();
    }
  });

  it('fails with AuditUnavailableError, naming the database without its password, while it is down', async () => {
    const store = new PostgresAuditStore(url, { connectTimeoutMs: 1_000 });
    await postgres.stop();
    try {
      const trail = new AuditTrail(store);
      await assert.rejects(trail.begin({ actor: ALICE, action: 'answer', tenant: 'lender-a' }), (error: unknown) => {
        assert.ok(error instanceof AuditUnavailableError, String(error));
        assert.match(error.message, /postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/audit/);
        assert.ok(!error.message.includes('secret-password'));
        return true;
      });
    } finally {
      await postgres.start();
      await store.close();
    }
    const after = new PostgresAuditStore(url);
    try {
      await new AuditTrail(after).record({ actor: ALICE, action: 'cancel', tenant: 'lender-a' }, 'ok');
    } finally {
      await after.close();
    }
  });
});

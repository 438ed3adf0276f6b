import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditTrail } from '../../src/audit/audit-trail.js';
import { AuditUnavailableError, type AuditStore } from '../../src/audit/audit-store.js';
import { FileAuditStore } from '../../src/audit/file-audit-store.js';
import { AuditedAction } from '../../src/http/audited-action.js';
import { HttpError } from '../../src/http/json-http.js';

const actor = { subject: 'pipeline:acme:key-sha256:abc', name: 'pipeline:acme', via: 'pipeline-key' };
const record = { actor, action: 'start' as const, tenant: 'acme', target: 'connection:acme:app-1' };
const asHttp = (error: unknown) => (error instanceof HttpError ? error : new HttpError(500, 'Internal', String(error)));

async function withTrail(run: (trail: AuditTrail, store: FileAuditStore) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'audited-action-'));
  const store = new FileAuditStore(join(dir, 'audit.jsonl'));
  try {
    await run(new AuditTrail(store, () => undefined), store);
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

test('an attempt begun before the work ends ok with the detail of what the work did', () =>
  withTrail(async (trail, store) => {
    const action = new AuditedAction(trail);
    const result = await action.run({
      work: async () => {
        await action.begin(record);
        return { started: 'run-1' };
      },
      detailOf: (done) => `run ${done.started}`,
      toHttpError: asHttp,
    });
    assert.deepEqual(result, { started: 'run-1' });
    const [entry, ...more] = await store.query({ limit: 10 });
    assert.equal(more.length, 0);
    assert.equal(entry?.outcome, 'ok');
    assert.equal(entry?.outcomeDetail, 'run run-1');
    assert.deepEqual(action.attemptIds(), [entry?.id]);
  }));

test('work that fails after its attempt ends it refused (4xx) or failed (5xx) with the code, and the HttpError is rethrown', () =>
  withTrail(async (trail, store) => {
    for (const [status, code] of [
      [409, 'AlreadyRunning'],
      [502, 'TemporalUnavailable'],
    ] as const) {
      const action = new AuditedAction(trail);
      await assert.rejects(
        action.run({
          work: async () => {
            await action.begin(record);
            throw new HttpError(status, code, 'no');
          },
          detailOf: () => undefined,
          toHttpError: asHttp,
        }),
        (error: unknown) => error instanceof HttpError && error.code === code,
      );
    }
    const entries = await store.query({ limit: 10 });
    assert.deepEqual(
      entries.map((entry) => [entry.outcome, entry.outcomeDetail]),
      [
        ['refused', 'AlreadyRunning'],
        ['failed', 'TemporalUnavailable'],
      ],
    );
  }));

test('a refusal before any attempt is recorded whole when the route keeps one record, and not at all when it does not', () =>
  withTrail(async (trail, store) => {
    const refuse = () => Promise.reject(new HttpError(400, 'InvalidRequest', 'bad body'));
    await assert.rejects(new AuditedAction(trail).run({ work: refuse, detailOf: () => undefined, toHttpError: asHttp, refusalOf: () => record }));
    await assert.rejects(new AuditedAction(trail).run({ work: refuse, detailOf: () => undefined, toHttpError: asHttp }));
    const entries = await store.query({ limit: 10 });
    assert.equal(entries.length, 1);
    assert.equal(entries[0]?.outcome, 'refused');
    assert.equal(entries[0]?.outcomeDetail, 'InvalidRequest');
  }));

test('a trail that cannot be written refuses with 503 before the action is done, and records nothing more', async () => {
  let attempts = 0;
  const down: AuditStore = {
    where: 'test:down',
    attempt: () => {
      attempts += 1;
      return Promise.reject(new AuditUnavailableError('test:down', 'disk full'));
    },
    outcome: () => Promise.resolve(),
    query: () => Promise.resolve([]),
    close: () => Promise.resolve(),
  };
  const action = new AuditedAction(new AuditTrail(down, () => undefined));
  let acted = false;
  await assert.rejects(
    action.run({
      work: async () => {
        await action.begin(record);
        acted = true;
      },
      detailOf: () => undefined,
      toHttpError: asHttp,
      refusalOf: () => record,
    }),
    (error: unknown) => error instanceof HttpError && error.status === 503 && error.code === 'AuditUnavailable',
  );
  assert.equal(acted, false, 'nothing is done unrecorded');
  assert.equal(attempts, 1, 'the refusal is not written to a trail that is down');
});

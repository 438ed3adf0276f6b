/**
 * Connections recorded before the versioned steps (two patch markers, two upserts at adoption) must
 * replay on today's code, which records one marker and one upsert: a connection started on an
 * unversioned worker moves to the first current build and finishes there. The fixture is a cached
 * connection with one poll, recorded by the build before (payloads under the test key).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import proto from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { workerDataConverterFor } from '../../src/codec/data-converter.js';
import { TEST_ENCRYPTION } from '../helpers/connection-stack.js';
import { productWorkflowCode } from '../helpers/test-tier.js';

const FIXTURE = new URL('../fixtures/histories/cached-connection-two-patches.json', import.meta.url);

type History = proto.temporal.api.history.v1.History;

function patchIds(history: History): string[] {
  return (history.events ?? []).flatMap((event) => {
    const payload = event.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0];
    return payload?.data ? [(JSON.parse(Buffer.from(payload.data).toString()) as { id: string }).id] : [];
  });
}

void describe('a connection recorded before the versioned steps', () => {
  // Written with protobufjs's toJSON (enums by name, bytes in base64), read back the same way.
  const history = proto.temporal.api.history.v1.History.fromObject(JSON.parse(readFileSync(FIXTURE, 'utf8')) as Record<string, unknown>);

  void it('is what it claims: the two earlier patch markers, no versioned-steps marker', () => {
    assert.deepEqual(patchIds(history), ['retention-notice-at-start', 'service-calls-as-activities']);
  });

  void it("replays on today's code without nondeterminism", async () => {
    await Worker.runReplayHistory(
      { ...productWorkflowCode(), dataConverter: workerDataConverterFor({ encryption: TEST_ENCRYPTION }), replayName: 'versioned-steps' },
      history,
      'fixture-connection-before-versioned-steps',
    );
  });
});

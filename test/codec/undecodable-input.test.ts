/**
 * A connection started with an input the worker cannot decrypt (a pipeline on a key the worker was
 * never given) fails as InvalidConnectionInput saying so, and naming the key, rather than listing
 * every field as missing. Real dev server, worker and sandbox; the pipeline's client on another key.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { Client, WorkflowFailedError } from '@temporalio/client';
import { dataConverterFor } from '../../src/codec/data-converter.js';
import { CONNECTION_WORKFLOW_TYPE } from '../../src/contract/connection/connection-definitions.js';
import { connectionStackOfFile } from '../helpers/connection-stack.js';
import { uniqueId } from '../helpers/temporal.js';

const file = connectionStackOfFile();

void describe('an input the worker cannot decrypt', () => {
  void it('fails the connection as InvalidConnectionInput naming the unknown key, not its fields', async () => {
    const { stack } = file;
    const loginId = await stack.savedLogin('no_mfa');
    const otherKey = { keyId: 'pipeline-only', key: randomBytes(32), decryptionKeys: new Map<string, Uint8Array>() };
    const pipeline = new Client({
      connection: file.env.connection,
      namespace: file.env.namespace ?? 'default',
      dataConverter: dataConverterFor({ encryption: otherKey }),
    });
    const handle = await pipeline.workflow.start(CONNECTION_WORKFLOW_TYPE, {
      taskQueue: stack.taskQueue,
      workflowId: uniqueId('undecodable-input'),
      args: [{ customerId: stack.customerId, session: { kind: 'cached', loginId }, products: { accountsDetail: {} } }],
    });
    // The worker's own client reads the failure (its message is encrypted under the worker's key).
    const error = await stack.client.workflow
      .getHandle(handle.workflowId)
      .result()
      .then(
        () => assert.fail('the connection completed'),
        (failure: unknown) => failure,
      );
    assert.ok(error instanceof WorkflowFailedError, String(error));
    assert.ok(error.cause instanceof ApplicationFailure, String(error.cause));
    assert.equal(error.cause.type, 'InvalidConnectionInput');
    assert.match(
      error.cause.message,
      /invalid connection input: cannot decrypt it: payload encrypted with key id "pipeline-only", which is not configured here/,
    );
    assert.doesNotMatch(error.cause.message, /customerId|session/);
  });
});

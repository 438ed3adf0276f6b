/**
 * The raw visibility pager refuses as the client's own list does: a gRPC refusal becomes the SDK's
 * ServiceError with the refusal as its cause, which the clients map to access denied or unavailable
 * (a bare gRPC error they would pass on raw: prod:check's authorization refusals saw it).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ServiceError, type Client } from '@temporalio/client';
import { TemporalAccessDeniedError, TemporalUnavailableError } from '../../src/client/errors.js';
import { listedExecutions, visibilityRows } from '../../src/temporal/visibility-rows.js';

/** A client whose every list is refused with gRPC `code`. */
function refusingClient(code: number, details: string): Client {
  const refusal = Object.assign(new Error(`${code} ${details}`), { code, details, metadata: { get: () => [] } });
  return { options: { namespace: 'default' }, workflowService: { listWorkflowExecutions: () => Promise.reject(refusal) } } as unknown as Client;
}

void describe('visibility rows read raw', () => {
  void it("turns a refused list into the client list's ServiceError, which the clients map to access denied", async () => {
    const client = refusingClient(7, 'Request unauthorized.');
    for (const rows of [visibilityRows(client, 'WorkflowType = "x"', 10), listedExecutions(client, 'WorkflowType = "x"', 10)]) {
      await assert.rejects(rows.next(), (error: unknown) => {
        assert.ok(error instanceof ServiceError, String(error));
        assert.equal((error.cause as { code?: number }).code, 7);
        assert.ok(TemporalUnavailableError.refused('127.0.0.1:7233', error) instanceof TemporalAccessDeniedError);
        return true;
      });
    }
  });

  void it('turns any other failure into a ServiceError too, its cause kept', async () => {
    const client = {
      options: { namespace: 'default' },
      workflowService: { listWorkflowExecutions: () => Promise.reject(new TypeError('broken')) },
    } as unknown as Client;
    await assert.rejects(visibilityRows(client, 'q', 10).next(), (error: unknown) => error instanceof ServiceError && error.cause instanceof TypeError);
  });
});

/**
 * Counting a tenant's connections (src/client/connection-counts.ts) without a server: the queries it
 * sends (each scoped to one CustomerId), how it reads a count grouped by ExecutionStatus, and how it
 * finds tenants one at a time, stopping at its limit. The same against the real dev server:
 * test/console/console-counts.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Client, CountWorkflowExecution } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { ConnectionCountsClient, tenantCountQuery, unknownTenantQuery } from '../../src/client/connection-counts.js';
import { CustomerIdKey } from '../../src/contract/search-attributes.js';

/** A client whose visibility holds one connection per listed tenant (newest first) and answers counts from `counts`. */
/** A search attribute's payload as the server keeps a Keyword. */
function keywordPayload(value: string) {
  const payload = defaultPayloadConverter.toPayload(value);
  return { ...payload, metadata: { ...payload.metadata, type: new TextEncoder().encode('Keyword') } };
}

function fakeClient(tenants: readonly string[], counts: (query: string) => CountWorkflowExecution) {
  const listed: string[] = [];
  const client = {
    workflow: {
      count: (query: string) => Promise.resolve(counts(query)),
    },
    options: { namespace: 'default' },
    // Visibility's raw rows (the next tenant's newest connection), as the server answers a list.
    workflowService: {
      listWorkflowExecutions: ({ query }: { query: string }) => {
        listed.push(query);
        const excluded =
          /NOT IN \(([^)]*)\)/
            .exec(query)?.[1]
            ?.split(', ')
            .map((quoted) => JSON.parse(quoted) as string) ?? [];
        const next = tenants.find((tenant) => !excluded.includes(tenant));
        const executions = next === undefined ? [] : [{ searchAttributes: { indexedFields: { [CustomerIdKey.name]: keywordPayload(next) } } }];
        return Promise.resolve({ executions, nextPageToken: new Uint8Array() });
      },
    },
  } as unknown as Pick<Client, 'workflow' | 'workflowService' | 'options'>;
  return { client, listed };
}

void describe('connection counts', () => {
  void it('scopes every query to one tenant, and running counts to one ConnectionStatus', () => {
    assert.equal(tenantCountQuery('lender-a'), 'WorkflowType = "connectionWorkflow" AND CustomerId = "lender-a"');
    assert.equal(
      tenantCountQuery('lender-a', 'AwaitingAnswer'),
      'WorkflowType = "connectionWorkflow" AND CustomerId = "lender-a" AND ExecutionStatus = "Running" AND ConnectionStatus = "AwaitingAnswer"',
    );
    assert.equal(unknownTenantQuery([]), 'WorkflowType = "connectionWorkflow" AND CustomerId IS NOT NULL');
    assert.equal(unknownTenantQuery(['a', 'b"c']), 'WorkflowType = "connectionWorkflow" AND CustomerId IS NOT NULL AND CustomerId NOT IN ("a", "b\\"c")');
  });

  void it('reads running connections by status and closed ones from the count grouped by ExecutionStatus', async () => {
    const queries: string[] = [];
    const { client } = fakeClient([], (query) => {
      queries.push(query);
      if (query.endsWith('GROUP BY ExecutionStatus')) {
        return {
          count: 7,
          groups: [
            { count: 3, groupValues: [['Running']] },
            { count: 2, groupValues: [['Completed']] },
            { count: 1, groupValues: [['Terminated']] },
            { count: 1, groupValues: ['Failed'] },
          ],
        } as CountWorkflowExecution;
      }
      return { count: query.includes('"AwaitingAnswer"') ? 2 : query.includes('"Retrieving"') ? 1 : 0, groups: [] };
    });
    const counted = await new ConnectionCountsClient(client).ofTenant('lender-a');
    assert.deepEqual(counted, {
      customerId: 'lender-a',
      total: 7,
      running: { Authorizing: 0, AwaitingAnswer: 2, Retrieving: 1 },
      closed: { Completed: 2, Failed: 1, Canceled: 0, Terminated: 1, TimedOut: 0, ContinuedAsNew: 0 },
    });
    assert.equal(queries.length, 4);
    assert.ok(queries.every((query) => query.includes('CustomerId = "lender-a"')));
  });

  void it('finds tenants one list call each, sorted, and says when the limit left some out', async () => {
    const { client, listed } = fakeClient(['zeta', 'alpha', 'mid'], () => ({ count: 0, groups: [] }));
    const counts = new ConnectionCountsClient(client);
    assert.deepEqual(await counts.tenants(10), { tenants: ['alpha', 'mid', 'zeta'], more: false });
    assert.equal(listed.length, 4, 'one call per tenant, and one that finds none');
    assert.deepEqual(await counts.tenants(2), { tenants: ['alpha', 'zeta'], more: true });
    assert.deepEqual(await counts.tenants(3), { tenants: ['alpha', 'mid', 'zeta'], more: false });
  });
});

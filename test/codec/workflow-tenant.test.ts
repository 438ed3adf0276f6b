/**
 * The tenant read from a workflow id (what the codec seals under): every kind of id the product makes
 * for a tenant names it, an id of no tenant names none, and the customer ids that would make a book's
 * ids ambiguous are refused where a book is asked for.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BookRef } from '../../src/client/book-input.js';
import { bookConnectionWorkflowId, bookEntryWorkflowId, bookReportPageId, bookScheduleId } from '../../src/contract/book/book-definitions.js';
import { forgetWorkflowId, refreshScheduleId, retentionWorkflowId } from '../../src/contract/login-keys.js';
import { tenantThrottleWorkflowId } from '../../src/contract/throttle/tenant-throttle-definitions.js';
import { reservedTenantProblem, tenantOfWorkflowId } from '../../src/contract/workflow-tenant.js';
import { connectionKey } from '../../src/client/business-key.js';

describe('the tenant of a workflow id', () => {
  it('is the customer id of every id the product makes for a tenant', () => {
    for (const customerId of ['acme', 'lender-a', 'Lender_7.eu', 'book', 'connection']) {
      const ids = [
        connectionKey(customerId, 'app-1'),
        `${refreshScheduleId(customerId, 'login-9')}-2026-11-28T22:00:00Z`,
        bookEntryWorkflowId(customerId, 'login-9'),
        // The retired book-login workflow's (until 2026-12-03): its closed histories are still read.
        `book-login-${customerId}:login-9-2026-11-28`,
        bookConnectionWorkflowId(customerId, 'login-9', '2026-11-28'),
        `${bookScheduleId(customerId, 'nightly')}-2026-11-28T22:00:00Z`,
        bookReportPageId(`${bookScheduleId(customerId, 'nightly')}-2026-11-28T22:00:00Z`, 2),
        forgetWorkflowId(customerId, 'login-9'),
        retentionWorkflowId(customerId, 'login-9'),
        tenantThrottleWorkflowId(customerId),
      ];
      for (const id of ids) assert.equal(tenantOfWorkflowId(id), customerId, id);
    }
  });

  it('is none for an id of no tenant, or one whose tenant part is not a customer id', () => {
    for (const id of ['fleet-budget', 'namespace-probe', 'my-own-id', 'connection-:app', 'connection-a b:app', 'throttle-', 'book-entry-', 'refresh-x']) {
      assert.equal(tenantOfWorkflowId(id), undefined, id);
    }
  });

  it('refuses a customer id that would make a book id ambiguous, naming why', () => {
    assert.match(reservedTenantProblem('entry-acme') ?? '', /must not begin with "entry-"/);
    assert.match(reservedTenantProblem('login-acme') ?? '', /must not begin with "login-"/);
    assert.equal(reservedTenantProblem('acme-entry'), undefined);
    const refused = BookRef.safeParse({ customerId: 'entry-acme' });
    assert.equal(refused.success, false);
    assert.match(JSON.stringify(refused.error?.issues), /reserved/);
  });
});

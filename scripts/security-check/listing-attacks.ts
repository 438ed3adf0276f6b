/**
 * security:check's attack on a tenant's listings: a connection row forged in visibility under the
 * tenant's id, its memo sealed with another tenant's key. The pipeline's and operators' listings
 * (src/client/connections.ts list, and the others docs/threat-model.md names) read no memo: one row
 * this process cannot open must not fail the tenant's whole listing.
 */
import { randomUUID } from 'node:crypto';
import { defaultPayloadConverter, type Payload, type PayloadCodec } from '@temporalio/common';
import { CustomerIdKey } from '../../src/contract/search-attributes.js';
import { startForgedRow } from './forged-rows.js';
import { until, type AttackResult, type MessageTarget } from './attacks.js';

const ATTACK_NAME = "a connection row forged in visibility, its memo sealed with another tenant's key, against the tenant's listing";

/**
 * Starts the row raw (as a connection of the tenant's, with a long start delay so no worker runs
 * it), then lists the tenant's connections: refused when the listing answers and shows the row by
 * its attributes, as any other.
 */
export async function forgedListingRowAttack(
  target: MessageTarget,
  otherTenant: { readonly codec: PayloadCodec; readonly workflowId: string },
): Promise<AttackResult> {
  const { customerId } = target;
  const namespace = target.raw.options.namespace;
  const workflowId = `connection-${customerId}:forged-row-${randomUUID().slice(0, 8)}`;
  const [sealed] = await otherTenant.codec.encode([defaultPayloadConverter.toPayload({ status: 'AwaitingAnswer' })], {
    type: 'workflow',
    namespace,
    workflowId: otherTenant.workflowId,
  });
  const memo: Record<string, Payload> = sealed ? { state: sealed } : {};
  await startForgedRow(target, { workflowId, workflowType: 'connectionWorkflow', memo, keywords: { [CustomerIdKey.name]: customerId } });
  try {
    let lastProblem = 'not listed yet';
    const listed = await until(async () => {
      try {
        const rows = await target.connections.list({ customerId, limit: 1000 });
        return rows.some((row) => row.workflowId === workflowId) ? rows.length : undefined;
      } catch (error) {
        lastProblem = error instanceof Error ? error.message : String(error);
        return undefined;
      }
    }, 'the forged row in the tenant listing').catch(() => undefined);
    if (listed === undefined)
      return { name: ATTACK_NAME, refused: false, detail: `the tenant's listing failed or left the row out: ${lastProblem.slice(0, 160)}` };
    // The console finds the tenants it counts by each one's newest row: the forged one, here.
    const counted = await target.connections.counts.tenants(1000).then(
      (found) => (found.tenants.includes(customerId) ? 'found the tenant' : 'left the tenant out'),
      (error: unknown) => `failed: ${(error instanceof Error ? error.message : String(error)).slice(0, 120)}`,
    );
    return {
      name: ATTACK_NAME,
      refused: counted === 'found the tenant',
      detail: `the listing answered with ${listed} row(s), the forged one by its attributes, its memo never opened; the console's search for tenants to count ${counted}`,
    };
  } finally {
    await target.sealed.workflow
      .getHandle(workflowId)
      .terminate('security-check: the forged row ends')
      .catch(() => undefined);
  }
}

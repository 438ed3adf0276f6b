/**
 * Ids of the `connections` Nexus service (import-free: the relay workflow's bundle carries it).
 * A relay's id names no tenant to src/contract/workflow-tenant.ts: its payloads are sealed under the
 * caller's boundary key (boundary-codec.ts), never a tenant's.
 */
export const NEXUS_RELAY_WORKFLOW_ID_PREFIX = 'nexus-relay-';
export const NEXUS_RELAY_WORKFLOW_TYPE = 'nexusConnectionRelay';

/** `nexus-relay-<customerId>:<applicationId>`, beside the connection `connection-<customerId>:<applicationId>`. */
export function relayWorkflowId(customerId: string, applicationId: string): string {
  return `${NEXUS_RELAY_WORKFLOW_ID_PREFIX}${customerId}:${applicationId}`;
}

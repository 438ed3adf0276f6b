/**
 * Ids of the `connections` Nexus service (import-free: the relay workflow's bundle carries it).
 * A relay's id names no tenant to src/contract/workflow-tenant.ts: its payloads are sealed under the
 * caller's boundary key (boundary-codec.ts), never a tenant's.
 */
export const NEXUS_RELAY_WORKFLOW_ID_PREFIX = 'nexus-relay-';
export const NEXUS_RELAY_WORKFLOW_TYPE = 'nexusConnectionRelay';
/** The relay behind `refreshBook`: the book refresh as its child. */
export const NEXUS_BOOK_RELAY_WORKFLOW_TYPE = 'nexusBookRefreshRelay';
/** Every workflow type the Nexus worker's bundle registers (the relays): what a replay of its histories selects. */
export const NEXUS_RELAY_WORKFLOW_TYPES: readonly string[] = [NEXUS_RELAY_WORKFLOW_TYPE, NEXUS_BOOK_RELAY_WORKFLOW_TYPE];

/** `nexus-relay-<customerId>:<applicationId>`, beside the connection `connection-<customerId>:<applicationId>`. */
export function relayWorkflowId(customerId: string, applicationId: string): string {
  return `${NEXUS_RELAY_WORKFLOW_ID_PREFIX}${customerId}:${applicationId}`;
}

/**
 * `nexus-relay-book:<customerId>:<cadence>`: one `refreshBook` of a book at a time. Two colons, so it
 * is never a connection's relay id (an application id has no colon), whatever the customer id.
 */
export function bookRelayWorkflowId(customerId: string, cadence: string): string {
  return `${NEXUS_RELAY_WORKFLOW_ID_PREFIX}book:${customerId}:${cadence}`;
}

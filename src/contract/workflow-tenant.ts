/**
 * The tenant a workflow id belongs to, read from the id alone: the one thing the SDK hands a payload
 * codec about whose payload it seals (the serialization context's workflow id), so the codec can seal
 * a tenant's payloads under that tenant's key. Import-free (the workflow bundle may carry it).
 *
 * Every id the product makes for a tenant's work is `<kind>-<customerId>:<rest>` (a connection's
 * business key, a scheduled or book refresh, a book, its entries and logins, forget and retention
 * records, a completion callback's delivery, a tenant's admission) or `throttle-<customerId>`; a customer id has no `:`. Longer kinds are tried first, so
 * `book-entry-acme:7` is tenant `acme`'s entry; hence a customer id may not begin with a kind's
 * remainder (`entry-`, `login-`): RESERVED_TENANT_PREFIXES, refused where customer ids come in.
 * An id of no tenant (the fleet's budget, a tool's own workflow, an id a pipeline chose freely)
 * answers undefined: its payloads are sealed under the product's key.
 */

/**
 * Kinds followed by `<customerId>:`, longest first where one begins another. `book-login-` was the
 * retired per-login workflow's (until 2026-12-03): its closed histories still decode under their tenant.
 */
export const WORKFLOW_ID_KINDS_WITH_COLON = [
  'book-entry-',
  'book-login-',
  'book-',
  'connection-',
  'refresh-',
  'forget-',
  'retention-',
  'callback-',
  'admission-',
] as const;
/** The kind followed by the customer id alone: `throttle-<customerId>`. */
export const THROTTLE_WORKFLOW_ID_KIND = 'throttle-';
const CUSTOMER_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** Whether `text` can be a tenant's customer id (what a payload's `encryption-tenant` must be too). */
export function isTenantId(text: string): boolean {
  return CUSTOMER_ID.test(text);
}

/** What a customer id may not begin with: `book-<it>:…` would read as another kind's id. */
export const RESERVED_TENANT_PREFIXES: readonly string[] = ['entry-', 'login-'];

/** Why `customerId` cannot be a tenant's id in workflow ids, or undefined when it can. */
export function reservedTenantProblem(customerId: string): string | undefined {
  const prefix = RESERVED_TENANT_PREFIXES.find((reserved) => customerId.startsWith(reserved));
  return prefix === undefined ? undefined : `must not begin with "${prefix}" (reserved: "book-${prefix}<customerId>:…" is another kind of workflow id)`;
}

/** The customer id of a tenant's workflow id, or undefined for an id of no tenant. */
export function tenantOfWorkflowId(workflowId: string): string | undefined {
  for (const kind of WORKFLOW_ID_KINDS_WITH_COLON) {
    if (!workflowId.startsWith(kind)) continue;
    const colon = workflowId.indexOf(':', kind.length);
    if (colon < 0) continue;
    const customerId = workflowId.slice(kind.length, colon);
    return isTenantId(customerId) ? customerId : undefined;
  }
  if (workflowId.startsWith(THROTTLE_WORKFLOW_ID_KIND)) {
    const customerId = workflowId.slice(THROTTLE_WORKFLOW_ID_KIND.length);
    return isTenantId(customerId) ? customerId : undefined;
  }
  return undefined;
}

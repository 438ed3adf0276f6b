/**
 * The ids of what belongs to one saved login of one tenant: its refresh schedule, its forget record
 * and its retention timer. Business keys like a connection's (`connection-<customerId>:<applicationId>`):
 * the `:` cannot occur in a customer id, so two tenants never share one. The client, the workflows and
 * the activities all compute them here (import-free, so the workflow bundle can carry it); the client
 * checks the parts before it uses them.
 */

/** `refresh-<customerId>:<loginId>`: the Temporal Schedule; its runs are `<this>-<scheduled time>`. */
export function refreshScheduleId(customerId: string, loginId: string): string {
  return `refresh-${customerId}:${loginId}`;
}

/** `forget-<customerId>:<loginId>`: the workflow that forgets the login, and the record it leaves. */
export function forgetWorkflowId(customerId: string, loginId: string): string {
  return `forget-${customerId}:${loginId}`;
}

/** `retention-<customerId>:<loginId>`: the timer that forgets the login N days after its last retrieval. */
export function retentionWorkflowId(customerId: string, loginId: string): string {
  return `retention-${customerId}:${loginId}`;
}

/** Whether a connection's workflow id is a run of a refresh schedule (the schedule appends the time). */
export function isScheduledRefreshId(workflowId: string): boolean {
  return workflowId.startsWith('refresh-');
}

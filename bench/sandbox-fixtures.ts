/** What several benchmarks need of the sandbox and of a history: a saved login, an event's time. */

/**
 * Saves a login of `username` (a sandbox scenario; one login per username and tenant) for
 * `customerId`, its data pending for `pendingPolls` polls when given; resolves with its LoginId.
 */
export async function createSandboxLogin(baseUrl: string, customerId: string, username: string, pendingPolls?: number): Promise<string> {
  const response = await fetch(`${baseUrl}/sandbox/${encodeURIComponent(customerId)}/logins`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(pendingPolls === undefined ? { username } : { username, pendingPolls }),
  });
  if (response.status !== 200) throw new Error(`creating ${username}: HTTP ${response.status} ${await response.text()}`);
  return ((await response.json()) as { LoginId: string }).LoginId;
}

/** A history event's time (a protobuf Timestamp) in epoch ms; NaN without one, so no gap is made up. */
export function eventTimeMs(time: { seconds?: unknown; nanos?: number | null } | null | undefined): number {
  if (!time) return NaN;
  return Number(time.seconds ?? 0) * 1000 + (time.nanos ?? 0) / 1e6;
}

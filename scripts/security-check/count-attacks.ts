/**
 * security:check's attack on the console's connection counts (GET /api/connections/counts,
 * src/console/count-routes.ts): tenant A's operator asking how many connections tenant B has.
 */
import type { AttackResult } from './attacks.js';
import type { SignInConsole } from './operator-attacks.js';

/**
 * Tenant A's operator on B's counts: refused when asking for B by name answers 403, alone and beside
 * A (`?customer=A,B`), and A's own counts (no tenant named) hold A and nothing else.
 */
export async function operatorOnOtherTenantsCounts(console_: SignInConsole, tenantA: string, tenantB: string): Promise<AttackResult> {
  const name = "tenant A's operator asking tenant B's connection counts";
  const operator = await console_.signedIn('operator-a');
  const counts = (query: string) => operator.request(`${console_.url}/api/connections/counts${query}`);
  const named = await counts(`?customer=${encodeURIComponent(tenantB)}`);
  const beside = await counts(`?customer=${encodeURIComponent(`${tenantA},${tenantB}`)}`);
  const own = await counts('');
  let listed: string[] = [];
  try {
    listed = ((JSON.parse(own.body) as { tenants?: { customerId?: string }[] }).tenants ?? []).map((tenant) => String(tenant.customerId));
  } catch {
    // Not JSON: judged below by its status.
  }
  const refused = named.status === 403 && beside.status === 403 && own.status === 200 && listed.length === 1 && listed[0] === tenantA;
  return {
    name,
    refused,
    detail: `?customer=${tenantB}: HTTP ${named.status}; ?customer=${tenantA},${tenantB}: HTTP ${beside.status}; its own counts: HTTP ${own.status}, tenants ${listed.join(', ') || 'none'}`,
  };
}

/** One aggregation client per tenant (customer id), created on first use and reused. */
import { createAggregatorClient, type AggregatorClient } from '../aggregator/client.js';
import type { ClientForTenant } from './connection-activities.js';

export interface TenantClientSettings {
  readonly baseUrl: string;
  readonly auth?: { readonly header: string; readonly value: string } | undefined;
  readonly timeoutMs?: number | undefined;
  readonly authorizeTimeoutMs?: number | undefined;
  readonly fetch?: typeof fetch | undefined;
}

export function tenantClients(settings: TenantClientSettings): ClientForTenant {
  const clients = new Map<string, AggregatorClient>();
  return (customerId) => {
    let client = clients.get(customerId);
    if (!client) {
      client = createAggregatorClient({ ...settings, customerId });
      clients.set(customerId, client);
    }
    return client;
  };
}

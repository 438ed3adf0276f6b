/**
 * The `connections` Nexus service's settings (read by src/settings/worker.ts): which endpoint acts for
 * which tenant, and the key each endpoint's caller seals what crosses the boundary with
 * (src/nexus/boundary-codec.ts). Each mapped endpoint is served by its own Nexus worker on the task
 * queue nexusTaskQueueOf(TEMPORAL_TASK_QUEUE, endpoint), the endpoint's target.
 */
import { ID_SEGMENT_SOURCE } from '../contract/ids.js';
import { keyedList } from './keyed-list.js';

/** A Nexus endpoint's name as the server takes it: a letter, then letters, digits, `-` and `_`. */
const ENDPOINT_SOURCE = '[A-Za-z][A-Za-z0-9_-]{0,199}';

/** `<endpoint>=<value>` entries, each endpoint once. */
function endpointList<T>(valueSource: string, rule: string, read: (value: string) => T) {
  return keyedList({ keySource: ENDPOINT_SOURCE, valueSource, rule, twice: (endpoint) => `endpoint ${endpoint} appears twice`, read });
}

/** `lender-a-connections=lender-a,lender-b-connections=lender-b` → customer id by endpoint. */
export const NexusEndpointTenants = endpointList(ID_SEGMENT_SOURCE, 'must be a comma-separated list of <endpoint>=<customerId>', (customerId) => customerId);

/** `lender-a-connections=/run/secrets/lender-a-nexus.key,...` → key file by endpoint. */
export const NexusEndpointKeyFiles = endpointList('[^,=]+', 'must be a comma-separated list of <endpoint>=<key file>', (path) => path.trim());

/** The task queue an endpoint's Nexus worker polls (the endpoint's target): `<TEMPORAL_TASK_QUEUE>-nexus-<endpoint>`. */
export function nexusTaskQueueOf(taskQueue: string, endpoint: string): string {
  return `${taskQueue}-nexus-${endpoint}`;
}

/**
 * The `connections` Nexus service's settings (read by src/settings/worker.ts): which endpoint acts for
 * which tenant, and the key each endpoint's caller seals what crosses the boundary with
 * (src/nexus/boundary-codec.ts). Each mapped endpoint is served by its own Nexus worker on the task
 * queue nexusTaskQueueOf(TEMPORAL_TASK_QUEUE, endpoint), the endpoint's target.
 */
import { z } from 'zod';
import { ID_SEGMENT_SOURCE } from '../contract/ids.js';

/** A Nexus endpoint's name as the server takes it: a letter, then letters, digits, `-` and `_`. */
const ENDPOINT_SOURCE = '[A-Za-z][A-Za-z0-9_-]{0,199}';

function endpointList<T>(valueSource: string, rule: string, read: (value: string) => T) {
  const entryPattern = new RegExp(`^(${ENDPOINT_SOURCE})=(${valueSource})$`);
  return z.string().transform((text, ctx) => {
    const values = new Map<string, T>();
    for (const raw of text.split(',')) {
      const entry = raw.trim();
      if (entry === '') continue;
      const match = entryPattern.exec(entry);
      if (!match?.[1] || match[2] === undefined) ctx.addIssue({ code: 'custom', message: `${JSON.stringify(entry)}: ${rule}` });
      else if (values.has(match[1])) ctx.addIssue({ code: 'custom', message: `endpoint ${match[1]} appears twice` });
      else values.set(match[1], read(match[2]));
    }
    return values;
  });
}

/** `lender-a-connections=lender-a,lender-b-connections=lender-b` → customer id by endpoint. */
export const NexusEndpointTenants = endpointList(ID_SEGMENT_SOURCE, 'must be a comma-separated list of <endpoint>=<customerId>', (customerId) => customerId);

/** `lender-a-connections=/run/secrets/lender-a-nexus.key,...` → key file by endpoint. */
export const NexusEndpointKeyFiles = endpointList('[^,=]+', 'must be a comma-separated list of <endpoint>=<key file>', (path) => path.trim());

/** The task queue an endpoint's Nexus worker polls (the endpoint's target): `<TEMPORAL_TASK_QUEUE>-nexus-<endpoint>`. */
export function nexusTaskQueueOf(taskQueue: string, endpoint: string): string {
  return `${taskQueue}-nexus-${endpoint}`;
}

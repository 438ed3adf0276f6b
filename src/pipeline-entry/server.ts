/**
 * Entry point of the pipeline entry: `npm run pipeline-entry`. Reads PIPELINE_ENTRY_HOST and
 * PIPELINE_ENTRY_PORT (default 127.0.0.1:8090), PIPELINE_KEY_FILES (required: each tenant's key
 * hashes), CALLBACK_URLS, CALLBACK_RESULT_IN_BODY and AUDIT_STORE (src/settings/pipeline-entry.ts), and reaches Temporal with
 * the client settings (src/settings/client.ts), as the console does. Beyond loopback it sits behind a
 * TLS proxy: keys and result tokens are bearer credentials.
 */
import { AuditTrail, openAuditStore } from '../audit/audit-trail.js';
import { loadClientConfig } from '../settings/client.js';
import { ConfigError } from '../settings/load.js';
import { loadPipelineEntryConfig } from '../settings/pipeline-entry.js';
import { temporalSettingsSource } from '../temporal/connection.js';
import { ConnectionsClient } from '../client/connections.js';
import { createPipelineEntryServer } from './app.js';
import { PipelineKeyFileError, PipelineKeys } from '../identity/pipeline-keys.js';

let entryConfig;
let clientConfig;
let keys;
try {
  entryConfig = loadPipelineEntryConfig();
  clientConfig = loadClientConfig();
  keys = new PipelineKeys(entryConfig.keyFiles);
} catch (error) {
  if (!(error instanceof ConfigError) && !(error instanceof PipelineKeyFileError)) throw error;
  process.stderr.write(`pipeline-entry: refusing to start: ${error instanceof ConfigError ? error.problems.join('; ') : error.message}\n`);
  process.exit(2);
}

const connections = await ConnectionsClient.connect(clientConfig);
const audit = new AuditTrail(openAuditStore(entryConfig.auditStore));
const entry = createPipelineEntryServer({ connections, keys, callbackUrls: entryConfig.callbackUrls, resultInBody: entryConfig.resultInBody, audit });
const { url } = await entry.listen(entryConfig.port, entryConfig.host);
const tenants = [...keys.counts()].map(([customerId, count]) => `${customerId} (${count} key${count === 1 ? '' : 's'})`).join(', ');
process.stdout.write(
  `pipeline entry on ${url}/v1/ for ${tenants}; Temporal ${clientConfig.temporal.address}, namespace ${clientConfig.temporal.namespace}, task queue ${clientConfig.temporal.taskQueue}${clientConfig.temporal.fromEnvConfig ? ` (${temporalSettingsSource(clientConfig.temporal)})` : ''}\n`,
);
process.stdout.write(
  `callbacks allowed for ${entryConfig.callbackUrls.size === 0 ? 'no tenant (CALLBACK_URLS unset)' : [...entryConfig.callbackUrls.keys()].join(', ')}; audit trail: ${audit.store.where}\n`,
);

async function shutdown(signal: string): Promise<void> {
  process.stdout.write(`pipeline-entry: ${signal}, closing\n`);
  await entry.close();
  await connections.close();
  await audit.close();
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void shutdown(signal));

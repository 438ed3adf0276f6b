/**
 * `npm start`'s pipeline entry (src/pipeline-entry/): a demo key for the demo tenant, minted
 * at each start (its hash written to <cache>/pipeline-keys/<customerId>.sha256, the key printed in the
 * stack's startup lines, as the console's token is), and the environment the entry runs with. The
 * worker is told where results by reference are fetched (PIPELINE_ENTRY_URL) unless it is set.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { mintPipelineKey } from '../../src/identity/pipeline-keys.js';
import { loadPipelineEntryConfig } from '../../src/settings/pipeline-entry.js';

export interface DevPipelineEntry {
  /** What the entry's process adds to the stack's environment. */
  readonly entryEnv: Readonly<Record<string, string>>;
  /** What every process of the stack adds (the worker's PIPELINE_ENTRY_URL). */
  readonly sharedEnv: Readonly<Record<string, string>>;
  readonly host: string;
  readonly port: number;
  /** The stack's startup line. */
  readonly line: string;
}

export function prepareDevPipelineEntry(cacheDir: string, customerId: string, env: NodeJS.ProcessEnv): DevPipelineEntry {
  const dir = join(cacheDir, 'pipeline-keys');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, `${customerId}.sha256`);
  const { key, hash } = mintPipelineKey();
  writeFileSync(file, `# npm start's demo key for ${customerId}, minted for this run\n${hash}\n`, { mode: 0o600 });
  // Parsed here too: a bad PIPELINE_ENTRY_* value stops the stack before the child starts.
  const entryEnv = { PIPELINE_KEY_FILES: `${customerId}=${file}` };
  const config = loadPipelineEntryConfig({ ...env, ...entryEnv });
  const url = `http://${config.host}:${config.port}`;
  return {
    entryEnv,
    sharedEnv: env.PIPELINE_ENTRY_URL ? {} : { PIPELINE_ENTRY_URL: url },
    host: config.host,
    port: config.port,
    line: `  Pipeline entry    ${url}/v1/connections  (Authorization: Bearer ${key} for ${customerId}; minted for this run, its hash in ${file})`,
  };
}

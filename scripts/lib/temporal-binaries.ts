/**
 * Where the Temporal binaries are, and how to hand them our search attributes. Used by the test
 * helpers, the test runner and the dev stack, so every one of them finds the same executables:
 * - the CLI (dev server): TEMPORAL_CLI_PATH, else .temporal/bin/temporal, else `temporal` on PATH;
 * - sdk-java's time-skipping test server: TEMPORAL_TEST_SERVER_PATH, else .temporal/bin/temporal-test-server.
 * `npm run provision` (scripts/provision-temporal.sh) fills .temporal/bin on a machine without them.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TypedSearchAttributes } from '@temporalio/common';
import { CONNECTION_SEARCH_ATTRIBUTES } from '../../src/workflows/search-attributes.js';

export const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Where provision-temporal.sh keeps the binaries; TEMPORAL_CACHE_DIR moves it (CI keeps it outside the clone). */
export const TEMPORAL_CACHE_DIR = process.env.TEMPORAL_CACHE_DIR || join(PROJECT_ROOT, '.temporal');

export class TemporalBinaryNotFoundError extends Error {
  override readonly name = 'TemporalBinaryNotFoundError';
  constructor(
    readonly binary: 'temporal CLI' | 'time-skipping test server',
    readonly searched: readonly string[],
  ) {
    super(
      `${binary} not found (looked at: ${searched.join(', ')}). ` +
        'Run `npm run provision` to build it into .temporal/bin, or point ' +
        `${binary === 'temporal CLI' ? 'TEMPORAL_CLI_PATH' : 'TEMPORAL_TEST_SERVER_PATH'} at an executable.`,
    );
  }
}

export function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function onPath(command: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && isExecutableFile(join(dir, command))) return join(dir, command);
  }
  return undefined;
}

/** Absolute path of the Temporal CLI (`temporal server start-dev`). */
export function temporalCliPath(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env.TEMPORAL_CLI_PATH;
  if (explicit) {
    if (isExecutableFile(explicit)) return explicit;
    throw new TemporalBinaryNotFoundError('temporal CLI', [`TEMPORAL_CLI_PATH=${explicit}`]);
  }
  const cached = join(TEMPORAL_CACHE_DIR, 'bin', 'temporal');
  if (isExecutableFile(cached)) return cached;
  const found = onPath('temporal', env);
  if (found) return found;
  throw new TemporalBinaryNotFoundError('temporal CLI', [cached, '`temporal` on PATH']);
}

/** Absolute path of the time-skipping test server wrapper (it execs java; args: `<port>`). */
export function temporalTestServerPath(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env.TEMPORAL_TEST_SERVER_PATH;
  if (explicit) {
    if (isExecutableFile(explicit)) return explicit;
    throw new TemporalBinaryNotFoundError('time-skipping test server', [`TEMPORAL_TEST_SERVER_PATH=${explicit}`]);
  }
  const cached = join(TEMPORAL_CACHE_DIR, 'bin', 'temporal-test-server');
  if (isExecutableFile(cached)) return cached;
  throw new TemporalBinaryNotFoundError('time-skipping test server', [cached]);
}

/** `--search-attribute Name=Keyword ...` for `temporal server start-dev`, from the single source. */
export function devServerSearchAttributeArgs(): string[] {
  return CONNECTION_SEARCH_ATTRIBUTES.flatMap(({ name, type }) => [
    '--search-attribute',
    `${name}=${TypedSearchAttributes.toMetadataType(type)}`,
  ]);
}

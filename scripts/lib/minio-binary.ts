/**
 * Where the MinIO server is (the S3 server the payload-store tests run against): MINIO_PATH, else
 * the build `npm run provision` (scripts/provision-temporal.sh minio) leaves in the Temporal cache.
 */
import { join } from 'node:path';
import { loadToolchainConfig } from './toolchain-settings.js';
import { isExecutableFile, TEMPORAL_CACHE_DIR } from './temporal-binaries.js';

export class MinioBinaryNotFoundError extends Error {
  override readonly name = 'MinioBinaryNotFoundError';
  constructor(readonly searched: readonly string[]) {
    super(
      `minio not found (looked at: ${searched.join(', ')}). Run \`bash scripts/provision-temporal.sh minio\` ` +
        'to build it into the Temporal cache (about 3 minutes, needs Go), or point MINIO_PATH at an executable.',
    );
  }
}

/** Absolute path of the `minio` executable. */
export function minioPath(explicit: string | undefined = loadToolchainConfig().paths.minio): string {
  if (explicit) {
    if (isExecutableFile(explicit)) return explicit;
    throw new MinioBinaryNotFoundError([`MINIO_PATH=${explicit}`]);
  }
  const cached = join(TEMPORAL_CACHE_DIR, 'bin', 'minio');
  if (isExecutableFile(cached)) return cached;
  throw new MinioBinaryNotFoundError([cached]);
}

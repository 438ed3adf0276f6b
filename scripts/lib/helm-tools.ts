/**
 * Where the chart check's tools are: helm, KEDA's CRDs with its temporal scaler's source, and the
 * kubernetes-validate venv, as `bash scripts/provision-temporal.sh helm` leaves them in the Temporal
 * cache at the releases scripts/lib/temporal-versions.env pins.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { isExecutableFile, TEMPORAL_CACHE_DIR } from './temporal-binaries.js';
import { HELM_VERSION, KEDA_VERSION, KUBERNETES_VALIDATE_VERSION } from './temporal-versions.js';

export class HelmToolsNotFoundError extends Error {
  override readonly name = 'HelmToolsNotFoundError';
  constructor(readonly missing: readonly string[]) {
    super(
      `the chart check's tools are not provisioned (missing: ${missing.join(', ')}). Run \`bash scripts/provision-temporal.sh helm\` ` +
        `to build helm ${HELM_VERSION} from its Go module (7 min on 2 cores, first run only) and fetch KEDA ${KEDA_VERSION}'s CRDs and kubernetes-validate ${KUBERNETES_VALIDATE_VERSION}.`,
    );
  }
}

export interface HelmTools {
  readonly helm: string;
  /** The venv's python, which has kubernetes_validate, jsonschema and yaml. */
  readonly python: string;
  /** KEDA's CRD files and temporal_scaler.go. */
  readonly kedaDir: string;
}

export function helmTools(cacheDir: string = TEMPORAL_CACHE_DIR): HelmTools {
  const tools: HelmTools = {
    helm: join(cacheDir, 'bin', 'helm'),
    python: join(cacheDir, 'kubernetes-validate', `v${KUBERNETES_VALIDATE_VERSION}`, 'venv', 'bin', 'python'),
    kedaDir: join(cacheDir, 'keda-crds', KEDA_VERSION),
  };
  const missing = [
    ...(isExecutableFile(tools.helm) ? [] : [tools.helm]),
    ...(isExecutableFile(tools.python) ? [] : [tools.python]),
    ...(existsSync(join(tools.kedaDir, 'temporal_scaler.go')) ? [] : [join(tools.kedaDir, 'temporal_scaler.go')]),
  ];
  if (missing.length > 0) throw new HelmToolsNotFoundError(missing);
  return tools;
}

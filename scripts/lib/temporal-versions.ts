/**
 * The Temporal server releases the project builds and runs, as scripts/lib/temporal-versions.env
 * declares them (scripts/provision-temporal.sh reads the same file); an environment variable of the
 * same name overrides each (loadToolchainConfig in scripts/lib/toolchain-settings.ts).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadToolchainConfig } from './toolchain-settings.js';

const declared = new Map(
  readFileSync(fileURLToPath(new URL('./temporal-versions.env', import.meta.url)), 'utf8')
    .split('\n')
    .flatMap((line) => {
      const match = /^([A-Z_]+)="?([^"]*)"?$/.exec(line.trim());
      return match ? [[match[1]!, match[2]!] as const] : [];
    }),
);

function declaredValue(name: string): string {
  const value = declared.get(name);
  if (!value) throw new Error(`scripts/lib/temporal-versions.env declares no ${name}`);
  return value;
}

const overrides = loadToolchainConfig().versions;

/** The production server release (prod:check, chaos on PostgreSQL, temporal-compose.yml). */
export const TEMPORAL_SERVER_VERSION = overrides.server ?? declaredValue('TEMPORAL_SERVER_VERSION');

/** Releases a database passes through, oldest first, ending at TEMPORAL_SERVER_VERSION (prod:upgrade). */
export const TEMPORAL_UPGRADE_PATH: readonly string[] = overrides.upgradePath ?? declaredValue('TEMPORAL_UPGRADE_PATH').split(/\s+/).filter(Boolean);

/** The Web UI server release beside the dev server. */
export const TEMPORAL_UI_VERSION = overrides.ui ?? declaredValue('TEMPORAL_UI_VERSION');

/** The OpenBao release of the key-provider tests (pinned with its wheel's hash; no override). */
export const OPENBAO_VERSION = declaredValue('OPENBAO_VERSION');

/** The moto release standing in for AWS KMS in the aws-kms key provider's tests (pinned with every dependency's hash in scripts/lib/moto-requirements.txt; no override). */
export const MOTO_VERSION = declaredValue('MOTO_VERSION');

/** The helm release of the chart's check (built from its Go module; no override). */
export const HELM_VERSION = declaredValue('HELM_VERSION');

/** The KEDA release whose CRDs and temporal scaler the chart's KEDA objects are checked against (no override). */
export const KEDA_VERSION = declaredValue('KEDA_VERSION');

/** kubernetes-validate, with Kubernetes' schemas (pinned with every dependency's hash in scripts/lib/kubernetes-validate-requirements.txt; no override). */
export const KUBERNETES_VALIDATE_VERSION = declaredValue('KUBERNETES_VALIDATE_VERSION');

/** The Kubernetes releases every rendered object is validated against, oldest first. */
export const KUBERNETES_SCHEMA_VERSIONS: readonly string[] = declaredValue('KUBERNETES_SCHEMA_VERSIONS').split(/\s+/).filter(Boolean);

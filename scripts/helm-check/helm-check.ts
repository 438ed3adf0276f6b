/**
 * `npm run helm:check [-- --cases a,b] [-- --chart DIR]`: proves the Helm chart as charts are proven
 * in CI, with the real tools (no cluster here: docs/operations.md says what that leaves unchecked).
 * For the defaults and every values file of the chart's ci/ folder:
 *   1. `helm lint --strict` (the chart, its templates and values.schema.json, which refuses any
 *      value the chart does not declare);
 *   2. `helm template` for the oldest Kubernetes release checked;
 *   3. every object against Kubernetes' own OpenAPI schemas of each KUBERNETES_SCHEMA_VERSIONS release
 *      (kubernetes-validate, strict) and KEDA's objects against the CRDs of the pinned KEDA module
 *      (scripts/helm-check/validate_objects.py), temporal triggers against the parameters KEDA's
 *      temporal scaler declares;
 *   4. the policy (scripts/helm-check/policy.ts): no secret in clear, non-root, probes, requests,
 *      egress closed, no API token, drain time; the chart's own contract: each worker gets every
 *      variable the chart owns (scripts/lib/helm-chart-variables.ts); and each pod's environment is
 *      accepted by the settings loader of the process it runs (scripts/helm-check/loader-check.ts).
 * One line per case, then `helm-check: ...` with the totals; exits 1 on any error or breach.
 */
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { readCommandLine } from '../lib/cli-options.js';
import { chartOwnedReads, chartVariables } from '../lib/helm-chart-variables.js';
import { CHART_DIR } from '../lib/helm-values-schema.js';
import { helmTools, type HelmTools } from '../lib/helm-tools.js';
import { PROJECT_ROOT } from '../lib/temporal-binaries.js';
import { KEDA_VERSION, KUBERNETES_SCHEMA_VERSIONS } from '../lib/temporal-versions.js';
import { loaderBreaches } from './loader-check.js';
import { renderChart, run } from './render.js';
import { kedaBreaches, temporalScalerParameters, type TemporalScalerParameters } from './keda-triggers.js';
import { policyBreaches, type KubeObject, type PolicyBreach } from './policy.js';

export class HelmCheckUsageError extends Error {
  override readonly name = 'HelmCheckUsageError';
}

/** A values case: the defaults (no file), or one file of the chart's ci/ folder. */
interface ValuesCase {
  readonly name: string;
  readonly file?: string;
}

interface CaseResult {
  readonly name: string;
  readonly objects: readonly KubeObject[];
  readonly errors: readonly string[];
  readonly breaches: readonly PolicyBreach[];
}

const RELEASE = 'aggregation';
const NAMESPACE = 'lending';

function valuesCases(chart: string): ValuesCase[] {
  const files = readdirSync(join(chart, 'ci'))
    .filter((file) => file.endsWith('-values.yaml'))
    .sort();
  return [{ name: 'defaults' }, ...files.map((file) => ({ name: file.replace(/-values\.yaml$/, ''), file: join(chart, 'ci', file) }))];
}

/** Each worker Deployment's container sets every variable the chart owns and the worker reads. */
function contractBreaches(objects: readonly KubeObject[]): PolicyBreach[] {
  const owned = chartOwnedReads().worker.filter((name) => name !== 'ALLOW_UNSUPPORTED_NODE' && name !== 'WORKER_WORKFLOW_BUNDLE');
  const breaches: PolicyBreach[] = [];
  for (const object of objects) {
    const labels = (object.metadata as { labels?: Record<string, string> } | undefined)?.labels ?? {};
    if (object.kind !== 'Deployment' || labels['app.kubernetes.io/component'] !== 'worker') continue;
    const containers = ((object.spec as { template: { spec: { containers: { env?: { name: string }[] }[] } } }).template.spec.containers ?? []).flatMap(
      (container) => container.env ?? [],
    );
    for (const name of owned) {
      if (!containers.some((variable) => variable.name === name))
        breaches.push({
          object: `Deployment/${object.metadata?.name ?? '?'}`,
          rule: 'chart-owned',
          detail: `the worker reads ${name}, which the chart owns, and it is not set`,
        });
    }
  }
  return breaches;
}

function checkCase(tools: HelmTools, chart: string, valuesCase: ValuesCase, scaler: TemporalScalerParameters, secretNames: ReadonlySet<string>): CaseResult {
  const valuesFiles = valuesCase.file ? [valuesCase.file] : [];
  const errors: string[] = [];
  const lint = run(tools.helm, ['lint', '--strict', chart, ...valuesFiles.flatMap((file) => ['--values', file])]);
  if (lint.status !== 0)
    errors.push(
      `helm lint: ${
        (lint.stdout + lint.stderr)
          .trim()
          .split('\n')
          .filter((line) => /error|\[ERROR\]|\[WARNING\]/i.test(line))
          .join('; ') || 'failed'
      }`,
    );
  const rendered = renderChart(tools, chart, { release: RELEASE, namespace: NAMESPACE, valuesFiles });
  if ('failure' in rendered) return { name: valuesCase.name, objects: [], errors: [...errors, rendered.failure], breaches: [] };
  errors.push(...rendered.schemaErrors);
  const breaches = [
    ...policyBreaches(rendered.objects, secretNames),
    ...kedaBreaches(rendered.objects, scaler),
    ...contractBreaches(rendered.objects),
    ...loaderBreaches(rendered.objects),
  ];
  return { name: valuesCase.name, objects: rendered.objects, errors, breaches };
}

function kindsOf(objects: readonly KubeObject[]): string {
  const counts = new Map<string, number>();
  for (const object of objects) counts.set(object.kind ?? '?', (counts.get(object.kind ?? '?') ?? 0) + 1);
  return [...counts].map(([kind, count]) => `${count} ${kind}`).join(', ');
}

function main(argv: readonly string[]): number {
  const { flags, values } = readCommandLine(
    argv,
    { flags: ['--help'], values: ['--cases', '--chart'] },
    (name, problem) => new HelmCheckUsageError(`${name}: ${problem}`),
  );
  if (flags.has('--help')) {
    console.log('npm run helm:check [-- --cases defaults,tls-mtls] [-- --chart DIR]: lint, render, validate and police the chart for each values case');
    return 0;
  }
  const chart = resolve(PROJECT_ROOT, values.get('--chart') ?? CHART_DIR);
  const tools = helmTools();
  const scaler = temporalScalerParameters(join(tools.kedaDir, 'temporal_scaler.go'));
  const secretNames = new Set(
    chartVariables()
      .filter((variable) => variable.secret)
      .map((variable) => variable.name),
  );
  let cases = valuesCases(chart);
  const wanted = values.get('--cases')?.split(',').filter(Boolean);
  if (wanted) {
    const unknown = wanted.filter((name) => !cases.some((candidate) => candidate.name === name));
    if (unknown.length > 0)
      throw new HelmCheckUsageError(`--cases: no values case ${unknown.join(', ')} (the cases: ${cases.map((candidate) => candidate.name).join(', ')})`);
    cases = cases.filter((candidate) => wanted.includes(candidate.name));
  }
  let objects = 0;
  let errors = 0;
  let breaches = 0;
  for (const valuesCase of cases) {
    const result = checkCase(tools, chart, valuesCase, scaler, secretNames);
    objects += result.objects.length;
    errors += result.errors.length;
    breaches += result.breaches.length;
    console.log(
      `helm-check: ${result.name}: ${result.objects.length} objects (${kindsOf(result.objects)}), ${result.errors.length} errors, ${result.breaches.length} policy breaches`,
    );
    for (const error of result.errors) console.log(`  error: ${error}`);
    for (const breach of result.breaches) console.log(`  breach [${breach.rule}] ${breach.object}: ${breach.detail}`);
  }
  console.log(
    `helm-check: ${cases.length} values cases, ${objects} objects validated against Kubernetes ${KUBERNETES_SCHEMA_VERSIONS.join(' and ')} and KEDA ${KEDA_VERSION}'s CRDs; ${errors} errors, ${breaches} policy breaches`,
  );
  return errors + breaches === 0 ? 0 : 1;
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (error) {
  console.error(`helm-check: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 2;
}

/**
 * The chart as a cluster would receive it: `helm template` for the oldest Kubernetes release checked,
 * then every object parsed and validated by validate_objects.py against each release's schemas and
 * KEDA's CRDs. What helm-check.ts checks its policy on, and what the chart's tests read.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { HelmTools } from '../lib/helm-tools.js';
import { PROJECT_ROOT } from '../lib/temporal-binaries.js';
import { KUBERNETES_SCHEMA_VERSIONS } from '../lib/temporal-versions.js';
import type { KubeObject } from './policy.js';

export interface RenderedChart {
  readonly objects: KubeObject[];
  /** Each object a schema refused: `<Kind/name>: <what>`. */
  readonly schemaErrors: string[];
}

/** A step that did not run to its end: which one, and what it said. */
export interface RenderFailure {
  readonly failure: string;
}

export interface RenderOptions {
  readonly release: string;
  readonly namespace?: string | undefined;
  /** `--values` files, in order. */
  readonly valuesFiles?: readonly string[] | undefined;
}

export function renderChart(tools: HelmTools, chart: string, { release, namespace, valuesFiles = [] }: RenderOptions): RenderedChart | RenderFailure {
  const template = run(tools.helm, [
    'template',
    release,
    chart,
    ...(namespace === undefined ? [] : ['--namespace', namespace]),
    '--kube-version',
    KUBERNETES_SCHEMA_VERSIONS[0]!,
    ...valuesFiles.flatMap((file) => ['--values', file]),
  ]);
  if (template.status !== 0) return { failure: `helm template: ${template.stderr.trim()}` };
  const validation = run(
    tools.python,
    [join(PROJECT_ROOT, 'scripts/helm-check/validate_objects.py'), '--kubernetes', KUBERNETES_SCHEMA_VERSIONS.join(','), '--crds', tools.kedaDir],
    template.stdout,
  );
  if (validation.status !== 0) return { failure: `validate_objects.py: ${validation.stderr.trim()}` };
  const validated = JSON.parse(validation.stdout) as { objects: KubeObject[]; errors: { object: string; message: string }[] };
  return { objects: validated.objects, schemaErrors: validated.errors.map((error) => `${error.object}: ${error.message}`) };
}

/** A tool run to its end (helm, python): its status and output; a tool that cannot start throws. */
export function run(command: string, args: readonly string[], input?: string): { status: number; stdout: string; stderr: string } {
  const result = spawnSync(command, args, { encoding: 'utf8', input, maxBuffer: 256 * 1024 * 1024 });
  if (result.error) throw result.error;
  return { status: result.status ?? 1, stdout: result.stdout, stderr: result.stderr };
}

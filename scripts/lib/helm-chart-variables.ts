/**
 * Which environment variables the Helm chart (deploy/helm/aggregation-connections/) passes to each
 * of its processes, from the same settings schemas as docs/configuration.md: every variable the
 * worker, the console and the pipeline entry read is a value of the chart, one to one, under its
 * own name (`config.<NAME>`, or `secretEnv.<NAME>` for a secret), unless the chart sets it itself
 * (CHART_OWNED says why). scripts/generate-helm-values.ts writes the chart's files/variables.yaml
 * and values.schema.json from it; test/helm/ fails when they no longer match.
 */
import type { z } from 'zod';
import type { VariableDoc } from '../../src/settings/document.js';
import { CONFIG_READERS, type ConfigReader } from './config-registry.js';

/**
 * The chart's processes, by their key in the chart's values and files/variables.yaml, and the
 * readers of docs/configuration.md each one is (the console and the pipeline entry reach Temporal
 * with the pipeline client's settings too).
 */
export const CHART_PROCESSES = { worker: ['worker'], console: ['console', 'client'], pipelineEntry: ['pipeline entry', 'client'] } as const;
export type ChartProcess = keyof typeof CHART_PROCESSES;

/** Variables the chart's templates set, not its values: what sets each. */
export const CHART_OWNED: Readonly<Record<string, string>> = {
  ALLOW_UNSUPPORTED_NODE: "the image's Node.js is the release .nvmrc pins; the override is for benchmarks, never a cluster",
  WORKER_WORKFLOW_BUNDLE: 'the image sets it to its prebuilt bundle (Dockerfile)',
  WORKER_POOL: 'each worker Deployment polls its own pool: service (or all without UNATTENDED_POOL=separate) and unattended',
  WORKER_BUILD_ID: "each build's Deployment: image.buildId, or previousBuilds[].buildId",
  WORKER_HEALTH_HOST: 'the probes reach the health endpoint on the pod address (0.0.0.0)',
  WORKER_HEALTH_PORT: "the probes' port, 8081 (the image's)",
  WORKER_METRICS_HOST: 'Prometheus scrapes the pod address (0.0.0.0)',
  WORKER_METRICS_PORT: "the scrape annotations' port, 9464",
  CONSOLE_HOST: "the console's Service reaches the pod address (0.0.0.0)",
  CONSOLE_PORT: "the console's Service and probes, 8080",
  PIPELINE_ENTRY_HOST: "the pipeline entry's Service reaches the pod address (0.0.0.0)",
  PIPELINE_ENTRY_PORT: "the pipeline entry's Service and probes, 8090",
};

export interface ChartVariable {
  readonly name: string;
  readonly description: string;
  /** The default in words, as docs/configuration.md gives it. */
  readonly defaultText: string;
  readonly secret: boolean;
  /** The chart's processes that read it. */
  readonly readBy: readonly ChartProcess[];
}

function readersOf(process: ChartProcess): ConfigReader[] {
  return CHART_PROCESSES[process].map((name) => {
    const reader = CONFIG_READERS.find((candidate) => candidate.name === name);
    if (!reader) throw new Error(`CONFIG_READERS has no reader named ${name} (scripts/lib/config-registry.ts)`);
    return reader;
  });
}

function defaultOf(schema: z.ZodType, meta: VariableDoc): string {
  if (meta.defaultText) return meta.defaultText;
  const parsed = schema.safeParse(undefined);
  if (parsed.success && parsed.data !== undefined) {
    const value: unknown = parsed.data;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
  }
  return '';
}

/** Every variable a chart process reads (chart-owned ones left out), by name. */
export function chartVariables(): ChartVariable[] {
  const variables = new Map<string, { description: string; defaultText: string; secret: boolean; readBy: ChartProcess[] }>();
  for (const process of Object.keys(CHART_PROCESSES) as ChartProcess[]) {
    for (const object of readersOf(process).flatMap((reader) => reader.variables)) {
      for (const [name, schema] of Object.entries(object.shape) as [string, z.ZodType][]) {
        if (name in CHART_OWNED) continue;
        const meta = schema.meta() as VariableDoc | undefined;
        if (!meta?.description) throw new Error(`${name} has no description: wrap its schema in doc(...)`);
        const known = variables.get(name);
        if (known) {
          if (!known.readBy.includes(process)) known.readBy.push(process);
          continue;
        }
        variables.set(name, { description: meta.description, defaultText: defaultOf(schema, meta), secret: meta.secret === true, readBy: [process] });
      }
    }
  }
  return [...variables].map(([name, variable]) => ({ name, ...variable })).sort((a, b) => a.name.localeCompare(b.name));
}

/** The chart-owned variables each process reads (the templates must set each one). */
export function chartOwnedReads(): Record<ChartProcess, string[]> {
  const reads = {} as Record<ChartProcess, string[]>;
  for (const process of Object.keys(CHART_PROCESSES) as ChartProcess[]) {
    const names = readersOf(process).flatMap((reader) => reader.variables.flatMap((object) => Object.keys(object.shape)));
    reads[process] = [...new Set(names.filter((name) => name in CHART_OWNED))].sort();
  }
  return reads;
}

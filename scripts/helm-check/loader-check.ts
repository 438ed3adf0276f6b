/**
 * Each rendered pod's environment through the settings loader of the process it runs, as the pod
 * would start it: its ConfigMap, its literal variables, and a stand-in shaped like the real value for
 * each variable from a Secret. A problem about a file under a mounted Secret (a certificate, a key
 * directory) is the Secret's to solve at runtime and is not counted; every other refusal is.
 */
import { secretStandIn } from '../lib/secret-stand-ins.js';
import { loadClientConfig } from '../../src/settings/client.js';
import { loadConsoleConfig } from '../../src/settings/console.js';
import { ConfigError } from '../../src/settings/load.js';
import { loadPipelineEntryConfig } from '../../src/settings/pipeline-entry.js';
import { loadWorkerConfig } from '../../src/settings/worker.js';
import type { KubeObject, PolicyBreach } from './policy.js';

interface Container {
  command?: string[];
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: unknown } }[];
  envFrom?: { configMapRef?: { name: string } }[];
  volumeMounts?: { mountPath: string; name: string }[];
}

/** The loaders of each command the chart's containers run. */
const LOADERS: Record<string, (env: NodeJS.ProcessEnv) => void> = {
  'dist/src/worker.js': (env) => void loadWorkerConfig(env),
  'dist/src/console/server.js': (env) => {
    loadConsoleConfig(env);
    loadClientConfig(env);
  },
  'dist/src/pipeline-entry/server.js': (env) => {
    loadPipelineEntryConfig(env);
    loadClientConfig(env);
  },
};

export function loaderBreaches(objects: readonly KubeObject[]): PolicyBreach[] {
  const configMaps = new Map(
    objects.filter((object) => object.kind === 'ConfigMap').map((object) => [object.metadata?.name ?? '', (object.data as Record<string, string>) ?? {}]),
  );
  const breaches: PolicyBreach[] = [];
  for (const object of objects) {
    if (object.kind !== 'Deployment') continue;
    const containers = (object.spec as { template: { spec: { containers: Container[] } } }).template.spec.containers;
    for (const container of containers) {
      const loader = LOADERS[container.command?.[1] ?? ''];
      if (!loader) {
        breaches.push({
          object: `Deployment/${object.metadata?.name ?? '?'}`,
          rule: 'loader',
          detail: `runs ${container.command?.join(' ') ?? '(the image CMD)'}, no process of the product`,
        });
        continue;
      }
      // The image's own ENV (Dockerfile).
      const env: NodeJS.ProcessEnv = { NODE_ENV: 'production', WORKER_WORKFLOW_BUNDLE: '/app/dist/workflow-bundle.js' };
      for (const source of container.envFrom ?? []) Object.assign(env, configMaps.get(source.configMapRef?.name ?? '') ?? {});
      for (const variable of container.env ?? []) env[variable.name] = variable.valueFrom ? secretStandIn(variable.name) : (variable.value ?? '');
      const mounted = (container.volumeMounts ?? []).filter((mount) => mount.name.startsWith('secret-file-')).map((mount) => mount.mountPath);
      const fromSecretFile = (problem: string) =>
        Object.entries(env).some(([name, value]) => problem.includes(name) && mounted.some((path) => value?.includes(path)));
      try {
        loader(env);
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        for (const problem of error.problems.filter((candidate) => !fromSecretFile(candidate)))
          breaches.push({
            object: `Deployment/${object.metadata?.name ?? '?'}`,
            rule: 'loader',
            detail: `its settings loader refuses the pod's environment: ${problem}`,
          });
      }
    }
  }
  return breaches;
}

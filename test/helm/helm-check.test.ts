// npm test: needs a server (a provisioned program: helm, KEDA's CRDs and kubernetes-validate)
// The Helm chart cannot rot unnoticed: `npm run helm:check` (real helm, Kubernetes' and KEDA's own
// schemas, the policy) passes on every values case, and refuses copies of the chart broken the ways
// a chart goes wrong: a secret in clear, a root container, a missing probe or request, egress open to
// all, a KEDA parameter the scaler does not read, a setting the worker would refuse. The chart's values
// are the worker's variables one to one, and its containers run what the Dockerfile builds.
import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCommand, type CommandRun } from '../helpers/command-run.js';
import { CHART_OWNED, chartOwnedReads, chartVariables } from '../../scripts/lib/helm-chart-variables.js';
import { CHART_DIR, HELM_GENERATE_COMMAND, renderValuesSchema, staleHelmFiles } from '../../scripts/lib/helm-values-schema.js';
import { helmTools } from '../../scripts/lib/helm-tools.js';
import { renderChart } from '../../scripts/helm-check/render.js';
import { PROJECT_ROOT } from '../../scripts/lib/temporal-binaries.js';
import { CONFIG_READERS } from '../../scripts/lib/config-registry.js';

const SCRIPT = join(PROJECT_ROOT, 'scripts', 'helm-check', 'helm-check.ts');
const CHART = join(PROJECT_ROOT, CHART_DIR);
/** The cases the issue asks for: defaults, TLS with mTLS, API key, each key provider, S3, KEDA on and off. */
const REQUIRED_CASES = ['defaults', 'tls-mtls', 'api-key', 'static-tenant-keys', 'vault-transit', 'aws-kms', 's3-store', 'keda-rollout', 'shared-pool'];

function helmCheck(...args: string[]): Promise<CommandRun> {
  return runCommand(process.execPath, ['--import', 'tsx', SCRIPT, ...args]);
}

type KubeObject = Record<string, unknown> & { kind: string; metadata: { name: string; labels?: Record<string, string> } };

/** The chart rendered with `valuesFile` (or its defaults), as objects: as helm-check renders it. */
function render(valuesFile?: string): KubeObject[] {
  const rendered = renderChart(helmTools(), CHART, { release: 'r', valuesFiles: valuesFile ? [valuesFile] : [] });
  assert.ok(!('failure' in rendered), 'failure' in rendered ? rendered.failure : '');
  assert.deepEqual(rendered.schemaErrors, []);
  return rendered.objects as KubeObject[];
}

interface Container {
  name: string;
  image: string;
  command: string[];
  env: { name: string; value?: string }[];
  securityContext: Record<string, unknown>;
  readinessProbe?: { httpGet?: { path: string; port: string } };
  ports: { name: string; containerPort: number }[];
}

const containersOf = (object: KubeObject) => (object.spec as { template: { spec: { containers: Container[] } } }).template.spec.containers;

describe('npm run helm:check', { concurrency: true }, () => {
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'helm-check-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** A copy of the chart with `change` made to it, and optionally a values case `bad` in its ci/ folder. */
  async function brokenChart(name: string, change: { file?: string; from?: string | RegExp; to?: string; values?: string }): Promise<string> {
    const copy = join(dir, name);
    await cp(CHART, copy, { recursive: true });
    if (change.file) {
      const path = join(copy, change.file);
      const original = await readFile(path, 'utf8');
      const text = original.replace(change.from!, change.to!);
      assert.notEqual(text, original, `the change for ${name} must apply to ${change.file}`);
      await writeFile(path, text);
    }
    if (change.values) await writeFile(join(copy, 'ci', 'bad-values.yaml'), change.values);
    return copy;
  }

  it('lints, renders and validates every values case against Kubernetes and KEDA, with no policy breach', async () => {
    const run = await helmCheck();
    assert.equal(run.code, 0, `exit code; stderr:\n${run.stderr}\nstdout:\n${run.stdout}`);
    for (const name of REQUIRED_CASES)
      assert.match(run.stdout, new RegExp(`^helm-check: ${name}: \\d+ objects .*, 0 errors, 0 policy breaches$`, 'm'), `case ${name}`);
    assert.match(
      run.stdout,
      /^helm-check: 9 values cases, \d+ objects validated against Kubernetes 1\.33\.0 and 1\.37\.0 and KEDA v2\.21\.0's CRDs; 0 errors, 0 policy breaches$/m,
    );
    // KEDA on: ScaledObjects for each pool and build, with a TriggerAuthentication where Temporal needs credentials.
    assert.match(run.stdout, /^helm-check: keda-rollout: .*4 Deployment, 4 ScaledObject\)/m);
    assert.match(run.stdout, /^helm-check: api-key: .*2 ScaledObject, 1 TriggerAuthentication\)/m);
    assert.doesNotMatch(/^helm-check: defaults: .*$/m.exec(run.stdout)?.[0] ?? '', /ScaledObject/);
  });

  const refusals: { name: string; change: Parameters<typeof brokenChart>[1]; expected: RegExp; valuesCase?: string }[] = [
    {
      name: 'a secret as an env literal',
      change: {
        file: 'templates/workers.yaml',
        from: '            - name: WORKER_POOL\n',
        to: '            - name: TEMPORAL_API_KEY\n              value: "tk_live_123"\n            - name: WORKER_POOL\n',
      },
      expected: /breach \[secret-in-clear\] Deployment\/\S+: container worker: TEMPORAL_API_KEY is a secret, given as a literal/,
    },
    {
      name: 'a private key in a ConfigMap',
      change: { values: 'config:\n  TEMPORAL_TLS_CLIENT_CERT_DATA: "-----BEGIN RSA PRIVATE KEY-----abc"\n' },
      expected: /breach \[secret-in-clear\] ConfigMap\/\S+: TEMPORAL_TLS_CLIENT_CERT_DATA's value looks like a secret/,
    },
    {
      name: 'a container as root',
      change: {
        file: 'templates/_helpers.tpl',
        from: 'runAsNonRoot: true\nrunAsUser: 1000\nrunAsGroup: 1000\nallowPrivilegeEscalation',
        to: 'runAsNonRoot: false\nrunAsUser: 0\nrunAsGroup: 1000\nallowPrivilegeEscalation',
      },
      expected: /breach \[non-root\] Deployment\/\S+: container worker may run as root/,
    },
    {
      name: 'no readiness probe',
      change: { file: 'templates/workers.yaml', from: / {10}readinessProbe:\n(?: {12}.*\n)+/, to: '' },
      expected: /breach \[probes\] Deployment\/\S+: container worker has no readiness probe/,
    },
    {
      name: 'no resource requests',
      change: { values: 'worker:\n  resources:\n    requests: null\n    limits:\n      memory: 1Gi\n' },
      expected: /breach \[resource-requests\] Deployment\/\S+-service-\S+: container worker requests no cpu/,
    },
    {
      name: 'egress open to all',
      change: { values: 'networkPolicy:\n  egress:\n    aggregator:\n      peers: [{ ipBlock: { cidr: 0.0.0.0/0 } }]\n      ports: [443]\n' },
      expected: /breach \[egress-closed\] NetworkPolicy\/\S+-worker: egress rule \d allows 0\.0\.0\.0\/0: all egress/,
    },
    {
      name: 'a KEDA parameter the scaler no longer reads',
      change: {
        file: 'templates/keda.yaml',
        from: '        workerDeploymentBuildId:',
        to: '        buildId: {{ $build.buildId | quote }}\n        workerDeploymentBuildId:',
      },
      expected: /breach \[keda-trigger\] ScaledObject\/\S+: the temporal scaler's buildId is deprecated/,
      valuesCase: 'keda-rollout',
    },
    {
      name: 'a setting the worker refuses',
      change: { values: 'config:\n  LOG_LEVEL: LOUD\n' },
      expected: /breach \[loader\] Deployment\/\S+: its settings loader refuses the pod's environment: LOG_LEVEL/,
    },
  ];
  for (const { name, change, expected, valuesCase } of refusals) {
    it(`fails on ${name}, naming the breach`, async () => {
      const chart = await brokenChart(name.replaceAll(/\W+/g, '-'), change);
      const run = await helmCheck('--chart', chart, '--cases', valuesCase ?? (change.values ? 'bad' : 'defaults'));
      assert.equal(run.code, 1, `exit code; stdout:\n${run.stdout}\nstderr:\n${run.stderr}`);
      assert.match(run.stdout, expected);
      assert.match(run.stdout, /^helm-check: 1 values cases, .*; \d+ errors, [1-9]\d* policy breaches$/m);
    });
  }

  it('refuses, by the values schema, a secret under config and a variable no process reads', async () => {
    const chart = await brokenChart('schema', { values: 'config:\n  TEMPORAL_API_KEY: tk_live_123\n  NOT_A_SETTING: "1"\n' });
    const run = await helmCheck('--chart', chart, '--cases', 'bad');
    assert.equal(run.code, 1, run.stdout);
    assert.match(run.stdout, /error: helm template: .*values don't meet the specifications of the schema/);
    assert.match(run.stdout, /TEMPORAL_API_KEY/);
    assert.match(run.stdout, /NOT_A_SETTING/);
  });

  it('names an unknown case and a bad option', async () => {
    const unknown = await helmCheck('--cases', 'defaults,nope');
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /--cases: no values case nope \(the cases: defaults, api-key, /);
    const option = await helmCheck('--chrat', CHART);
    assert.equal(option.code, 2);
    assert.match(option.stderr, /--chrat: unknown option/);
  });
});

describe("the chart's values are the processes' variables, one to one", () => {
  it(`is what ${HELM_GENERATE_COMMAND} writes from the settings schemas (a variable added to the worker and not to the chart fails here)`, () => {
    assert.deepEqual(staleHelmFiles(PROJECT_ROOT), [], `regenerate with ${HELM_GENERATE_COMMAND}`);
  });

  it('gives every variable the worker, the console and the pipeline entry read exactly one home: config, secretEnv or the chart itself', () => {
    const schema = renderValuesSchema() as { properties: Record<string, { properties: Record<string, unknown> }> };
    const config = new Set(Object.keys(schema.properties.config!.properties));
    const secretEnv = new Set(Object.keys(schema.properties.secretEnv!.properties));
    const readers = ['worker', 'console', 'pipeline entry', 'client'];
    const read = new Set(
      CONFIG_READERS.filter((reader) => readers.includes(reader.name)).flatMap((reader) => reader.variables.flatMap((object) => Object.keys(object.shape))),
    );
    for (const name of read) {
      const homes = [config.has(name) && 'config', secretEnv.has(name) && 'secretEnv', name in CHART_OWNED && 'the chart'].filter(Boolean);
      assert.equal(homes.length, 1, `${name}: ${homes.join(', ') || 'no value of the chart'}`);
    }
    for (const name of [...config, ...secretEnv]) assert.ok(read.has(name), `${name} is a value of the chart but no process reads it`);
    for (const variable of chartVariables())
      assert.equal(secretEnv.has(variable.name), variable.secret, `${variable.name}: a secret exactly when its schema says so`);
    // Each variable the chart owns is one a process reads, and each worker Deployment sets the worker's (helm:check's contract).
    const owned = new Set(Object.values(chartOwnedReads()).flat());
    for (const name of Object.keys(CHART_OWNED)) assert.ok(owned.has(name), `${name} is owned by the chart but no process reads it`);
  });
});

describe('the image the chart runs is the one the Dockerfile builds', () => {
  it("runs the Dockerfile's user, command and health endpoint", async () => {
    const dockerfile = await readFile(join(PROJECT_ROOT, 'Dockerfile'), 'utf8');
    const [user, group] = /^USER (\d+):(\d+)$/m.exec(dockerfile)!.slice(1).map(Number);
    const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)![1]!) as string[];
    const healthPort = /^ENV WORKER_HEALTH_PORT=(\d+)$/m.exec(dockerfile)![1]!;
    const objects = render(join(CHART, 'ci', 's3-store-values.yaml'));
    const deployments = objects.filter((object) => object.kind === 'Deployment');
    assert.deepEqual(deployments.map((object) => object.metadata.labels?.['app.kubernetes.io/component']).sort(), [
      'console',
      'pipeline-entry',
      'worker',
      'worker',
    ]);
    for (const deployment of deployments) {
      for (const container of containersOf(deployment)) {
        assert.equal(container.securityContext.runAsUser, user, `${deployment.metadata.name}: the image's user`);
        assert.equal(container.securityContext.runAsGroup, group);
        assert.equal(container.command[0], 'node', 'node itself is the main process, so SIGTERM reaches the drain');
        assert.match(container.image, /^aggregation-connections:/);
      }
    }
    for (const worker of deployments.filter((object) => object.metadata.labels?.['app.kubernetes.io/component'] === 'worker')) {
      const [container] = containersOf(worker);
      assert.deepEqual(container!.command, cmd, "the worker runs the image's CMD");
      assert.equal(container!.env.find((variable) => variable.name === 'WORKER_HEALTH_PORT')?.value, healthPort);
      assert.equal(container!.ports.find((port) => port.name === 'health')?.containerPort, Number(healthPort));
      assert.equal(container!.readinessProbe?.httpGet?.path, '/healthz');
    }
    // What each app runs is compiled from a source that exists.
    for (const deployment of deployments) {
      const entry = containersOf(deployment)[0]!.command[1]!;
      await readFile(join(PROJECT_ROOT, entry.replace(/^dist\//, '').replace(/\.js$/, '.ts')));
    }
  });
});

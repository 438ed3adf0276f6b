/**
 * The Helm chart's values.schema.json (Helm checks every install, upgrade, lint and template against
 * it), its files/variables.yaml and the values reference docs/helm-values.md, all rendered here:
 * `config` and `secretEnv` list exactly the variables of scripts/lib/helm-chart-variables.ts, so a
 * setting the worker gains is a value of the chart once `npm run helm:generate` has run (and
 * test/helm/ fails until it has). The reference is rendered from the schema itself.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHART_OWNED, CHART_PROCESSES, chartVariables, type ChartVariable } from './helm-chart-variables.js';

export const CHART_DIR = 'deploy/helm/aggregation-connections';
export const HELM_GENERATE_COMMAND = 'npm run helm:generate';
export const HELM_GENERATED_FILES = [`${CHART_DIR}/values.schema.json`, `${CHART_DIR}/files/variables.yaml`, 'docs/helm-values.md'] as const;
export type HelmGeneratedFile = (typeof HELM_GENERATED_FILES)[number];

type Schema = Record<string, unknown>;

const string = (description: string, more: Schema = {}): Schema => ({ type: 'string', description, ...more });
const integer = (description: string, minimum = 0, more: Schema = {}): Schema => ({ type: 'integer', minimum, description, ...more });
const boolean = (description: string): Schema => ({ type: 'boolean', description });
const object = (description: string, properties: Record<string, Schema>, more: Schema = {}): Schema => ({
  type: 'object',
  description,
  additionalProperties: false,
  properties,
  ...more,
});
/** Kubernetes objects the chart passes through as given (resources, affinity, peers): Kubernetes' own schemas check them once rendered. */
const passThrough = (description: string, type: 'object' | 'array' = 'object'): Schema => ({ type, description });

const PORTS = { type: 'array', description: 'TCP ports.', items: { type: 'integer', minimum: 1, maximum: 65_535 } };
const PEERS = passThrough('NetworkPolicy peers (ipBlock, namespaceSelector, podSelector); none: the destination stays closed.', 'array');
const egressRule = (what: string): Schema => object(`Egress to ${what}.`, { peers: PEERS, ports: PORTS });

function variableSchema(variable: ChartVariable): Schema {
  const defaultText = variable.defaultText ? ` Default: ${variable.defaultText}.` : '';
  return { type: ['string', 'number', 'boolean'], description: `${variable.description}${defaultText} Read by: ${variable.readBy.join(', ')}.` };
}

function configSchema(variables: readonly ChartVariable[], description: string): Schema {
  return object(description, Object.fromEntries(variables.filter((variable) => !variable.secret).map((variable) => [variable.name, variableSchema(variable)])));
}

/** A component's own settings: the same variables as the top-level `config`, declared once there. */
const COMPONENT_CONFIG: Schema = { $ref: '#/properties/config', description: "This component's own settings, over `config` (the same variables)." };

function podSchema(what: string, defaults: { replicas: string }, more: Record<string, Schema> = {}): Schema {
  return object(what, {
    replicas: integer(defaults.replicas),
    config: COMPONENT_CONFIG,
    resources: passThrough("The container's resources (requests are required by helm:check's policy)."),
    podAnnotations: { type: 'object', description: 'Annotations of the pods.', additionalProperties: { type: 'string' } },
    nodeSelector: passThrough('Node selector of the pods.'),
    tolerations: passThrough('Tolerations of the pods.', 'array'),
    affinity: passThrough('Affinity of the pods.'),
    ...more,
  });
}

const HTTP_SERVICE = object("The component's Service.", {
  type: string('Service type.', { enum: ['ClusterIP', 'NodePort', 'LoadBalancer'] }),
  port: integer('Service port.', 1, { maximum: 65_535 }),
});

export function renderValuesSchema(): Schema {
  const variables = chartVariables();
  const secrets = variables.filter((variable) => variable.secret);
  const secretRef = object(
    'A key of a Secret in the release namespace.',
    { name: string('The Secret.', { minLength: 1 }), key: string('Its key.', { minLength: 1 }) },
    { required: ['name', 'key'] },
  );
  const buildId = string('A Worker Deployment Versioning build id (WORKER_BUILD_ID: 1-64 letters, digits, - or _).', { pattern: '^[A-Za-z0-9_-]{1,64}$' });
  const scaling = (pool: string) =>
    object(`Scaling of the ${pool} pool's current build.`, {
      minReplicas: integer('Fewest pods.'),
      maxReplicas: integer('Most pods.', 1),
      targetQueueSize: integer('Backlog (workflow and activity tasks) per pod.', 1),
      activationTargetQueueSize: integer('Backlog above which the pool scales up from zero.'),
    });
  return {
    $schema: 'https://json-schema.org/draft-07/schema#',
    title: 'aggregation-connections chart values',
    type: 'object',
    additionalProperties: false,
    properties: {
      global: passThrough("Helm's global values (unused by this chart)."),
      image: object("The image the Dockerfile builds (uid 1000, the worker's CMD, GET /healthz on 8081).", {
        repository: string('Image repository.', { minLength: 1 }),
        tag: string("Image tag; default the chart's appVersion."),
        digest: string('An image digest; wins over tag.', { pattern: '^(sha256:[a-f0-9]{64})?$' }),
        pullPolicy: string('Image pull policy.', { enum: ['Always', 'IfNotPresent', 'Never'] }),
        buildId: {
          ...buildId,
          description: "This build's Worker Deployment Versioning build id (WORKER_BUILD_ID); default the tag, its dots as dashes.",
          pattern: '^[A-Za-z0-9_-]{0,64}$',
        },
      }),
      imagePullSecrets: passThrough('Image pull Secrets of every pod.', 'array'),
      config: configSchema(
        variables,
        `Every non-secret variable the worker, the console and the pipeline entry read, by its name (docs/configuration.md); each process gets the ones it reads. Empty: the process's default. Set by the chart itself: ${Object.keys(CHART_OWNED).join(', ')}.`,
      ),
      secretEnv: {
        type: 'object',
        description:
          "Secret variables, each from a key of a Secret the cluster holds (the chart renders no secret's value); each process gets the ones it reads.",
        additionalProperties: false,
        properties: Object.fromEntries(secrets.map((variable) => [variable.name, { ...secretRef, description: variableSchema(variable).description }])),
      },
      secretFiles: {
        type: 'array',
        description:
          'Secrets mounted read-only as files, for the variables that name a file (TEMPORAL_TLS_*_PATH, TEMPORAL_API_KEY_FILE, PAYLOAD_TENANT_KEYS_DIR, PIPELINE_KEY_FILES, ...).',
        items: object(
          'One Secret as a directory.',
          {
            secretName: string('The Secret.', { minLength: 1 }),
            mountPath: string('Where its keys appear as files.', { pattern: '^/' }),
            processes: { type: 'array', description: 'The processes that mount it.', minItems: 1, items: { enum: Object.keys(CHART_PROCESSES) } },
          },
          { required: ['secretName', 'mountPath', 'processes'] },
        ),
      },
      worker: podSchema(
        'The service pool: connections the pipeline and operators start, and every call to the service.',
        { replicas: 'Pods without KEDA.' },
        {
          terminationGracePeriodSeconds: integer("Seconds SIGTERM may drain a pod: longer than the worker's own 2-minute drain.", 130),
          topologySpreadConstraints: passThrough('Topology spread of the pods.', 'array'),
        },
      ),
      unattendedWorker: podSchema(
        'The unattended pool (config.UNATTENDED_POOL=separate): book refreshes.',
        { replicas: 'Pods without KEDA.' },
        {
          terminationGracePeriodSeconds: integer("Seconds SIGTERM may drain a pod: longer than the worker's own 2-minute drain.", 130),
          topologySpreadConstraints: passThrough('Topology spread of the pods.', 'array'),
        },
      ),
      previousBuilds: {
        type: 'array',
        description: 'Earlier builds whose Pinned workflows still run: their pods stay until the version is drained.',
        items: object(
          'One earlier build.',
          { buildId, tag: string('Its image tag.', { minLength: 1 }), replicas: integer('Pods without KEDA (default 1).', 1) },
          { required: ['buildId', 'tag'] },
        ),
      },
      console: podSchema(
        'The operator console and its codec endpoint.',
        { replicas: 'Pods.' },
        {
          enabled: boolean('Deploy the console.'),
          service: HTTP_SERVICE,
        },
      ),
      pipelineEntry: podSchema(
        'The pipeline entry (HTTP for pipelines without Temporal).',
        { replicas: 'Pods.' },
        {
          enabled: boolean('Deploy the pipeline entry.'),
          service: HTTP_SERVICE,
        },
      ),
      keda: object("KEDA's temporal scaler on each pool's backlog (KEDA 2.17 or later in the cluster).", {
        enabled: boolean('Scale with KEDA; off: fixed replicas.'),
        pollingInterval: integer('Seconds between two reads of the backlog.', 1),
        cooldownPeriod: integer('Seconds of no backlog before scaling to zero (where the minimum is zero).'),
        service: scaling('service'),
        unattended: scaling('unattended'),
        previousBuilds: object("Fewest pods of a previous build's pools.", {
          serviceMinReplicas: integer('Service pool: its Pinned connections may still be answered.'),
          unattendedMinReplicas: integer('Unattended pool.'),
        }),
        authentication: object('How KEDA reaches Temporal, from Secrets.', {
          apiKey: object('An API key (Temporal Cloud).', { name: string('The Secret.'), key: string('Its key.') }),
          tlsSecretName: string('mTLS: a kubernetes.io/tls Secret with ca.crt.'),
          tlsServerName: string("The name the server's certificate is checked against."),
        }),
      }),
      metrics: object("The worker's Prometheus metrics.", { scrapeAnnotations: boolean('prometheus.io/* annotations on the worker pods.') }),
      podDisruptionBudget: object('A PodDisruptionBudget per pool and app.', {
        enabled: boolean('Create them.'),
        maxUnavailable: integer('Pods that may leave at once.', 1),
      }),
      serviceAccount: object("The pods' ServiceAccount (no API token is mounted).", {
        create: boolean('Create it.'),
        name: string("Its name; default the release's full name."),
        annotations: { type: 'object', description: 'Annotations (IRSA, Workload Identity).', additionalProperties: { type: 'string' } },
      }),
      networkPolicy: object('NetworkPolicies: each component reaches DNS, Temporal and the peers given, nothing else.', {
        enabled: boolean('Create them.'),
        egress: object('Destinations.', {
          temporal: egressRule('Temporal'),
          aggregator: egressRule('the aggregation service'),
          kms: egressRule('the KMS (Vault, OpenBao, AWS KMS)'),
          payloadStore: egressRule('the payload store (S3)'),
          auditStore: egressRule("the audit trail's PostgreSQL"),
          callbacks: egressRule("the pipelines' callback URLs"),
          identityProvider: egressRule('the OpenID Connect provider'),
          otlp: egressRule('the OTLP collector'),
        }),
        ingress: object('Who may connect.', {
          console: { ...PEERS, description: 'Peers that may reach the console.' },
          pipelineEntry: { ...PEERS, description: 'Peers that may reach the pipeline entry.' },
          metrics: { ...PEERS, description: "Peers that may scrape the workers' metrics." },
        }),
      }),
    },
  };
}

/** files/variables.yaml: the variables each process reads, for the templates to pick from `config` and `secretEnv`. */
export function renderVariablesFile(): string {
  const variables = chartVariables();
  const lines = [
    '# Generated by `npm run helm:generate` (scripts/lib/helm-values-schema.ts) from the settings schemas: the variables each',
    '# process of the chart reads (the templates give a process only these).',
  ];
  for (const process of Object.keys(CHART_PROCESSES)) {
    lines.push(`${process}:`);
    for (const variable of variables.filter((candidate) => candidate.readBy.includes(process as never))) lines.push(`  - ${variable.name}`);
  }
  return `${lines.join('\n')}\n`;
}

const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

/** What the reference reads of a schema node. */
interface SchemaNode {
  readonly type?: string | readonly string[];
  readonly description?: string;
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly items?: SchemaNode;
  /** `#/properties/<name>`: the same values as the top-level one of that name. */
  readonly $ref?: string;
}

function rows(schema: SchemaNode, path: string, out: string[]): void {
  const referred = schema.$ref ? `object (as \`${schema.$ref.replace('#/properties/', '')}\`)` : undefined;
  const type = referred ?? (typeof schema.type === 'string' ? schema.type : (schema.type ?? []).join(' or '));
  if (path) out.push(`| \`${path}\` | ${type} | ${cell(schema.description ?? '')} |`);
  if (!schema.properties) return;
  for (const [name, child] of Object.entries(schema.properties)) rows(child, path ? `${path}.${name}` : name, out);
  if (schema.items?.properties) rows(schema.items, `${path}[]`, out);
}

/** docs/helm-values.md, from the schema (`schema` as values.schema.json holds it). */
export function renderValuesReference(schema: SchemaNode): string {
  const out = [
    '# Helm chart values',
    '',
    '<!-- Generated by `npm run helm:generate` from deploy/helm/aggregation-connections/values.schema.json: edit scripts/lib/helm-values-schema.ts (or the settings modules), then regenerate. -->',
    '',
    'Every value of the chart in [deploy/helm/aggregation-connections/](../deploy/helm/aggregation-connections/), as its values.schema.json declares it (Helm refuses a value outside it). `config.<NAME>` and `secretEnv.<NAME>` are the variables of [configuration.md](configuration.md), one to one. [operations.md](operations.md#kubernetes-with-helm) walks through an install.',
    '',
    '| Value | Type | What it does |',
    '|---|---|---|',
  ];
  rows(schema, '', out);
  return `${out.join('\n')}\n`;
}

export function renderHelmGenerated(): Record<HelmGeneratedFile, string> {
  const schema = renderValuesSchema();
  return {
    [`${CHART_DIR}/values.schema.json`]: `${JSON.stringify(schema, null, 2)}\n`,
    [`${CHART_DIR}/files/variables.yaml`]: renderVariablesFile(),
    'docs/helm-values.md': renderValuesReference(schema),
  };
}

/** The generated files that differ from what is on disk. */
export function staleHelmFiles(root: string): HelmGeneratedFile[] {
  const rendered = renderHelmGenerated();
  return HELM_GENERATED_FILES.filter((file) => {
    try {
      return readFileSync(join(root, file), 'utf8') !== rendered[file];
    } catch {
      return true;
    }
  });
}

/**
 * The policy every object the chart renders must meet (npm run helm:check), beyond Kubernetes' and
 * KEDA's schemas: nothing secret in clear, no container as root or able to become it, a probe and
 * resource requests on every container, no NetworkPolicy that opens all egress, no API token
 * mounted, and a worker given longer to drain than its own drain takes.
 */

/** A rendered object, as Kubernetes' JSON. */
export type KubeObject = Record<string, unknown> & { kind?: string; metadata?: { name?: string } };

export interface PolicyBreach {
  readonly object: string;
  readonly rule: string;
  readonly detail: string;
}

/** Seconds the worker's own SIGTERM drain may take (shutdownGraceTime in src/worker/pool-workers.ts), plus its exit. */
export const WORKER_DRAIN_SECONDS = 120;

/** Values that are secrets whatever their variable's name: a private key, a webhook secret, a URL with a password. */
const SECRET_VALUE = /-----BEGIN [A-Z ]*PRIVATE KEY-----|\bwhsec_[A-Za-z0-9+/=]{8,}|:\/\/[^/\s:@]+:[^/\s@]+@/;

interface Container {
  name?: string;
  image?: string;
  env?: { name: string; value?: string; valueFrom?: unknown }[];
  securityContext?: Record<string, unknown>;
  readinessProbe?: unknown;
  livenessProbe?: unknown;
  resources?: { requests?: Record<string, unknown> };
}

interface PodSpec {
  containers?: Container[];
  initContainers?: Container[];
  securityContext?: Record<string, unknown>;
  automountServiceAccountToken?: boolean;
  terminationGracePeriodSeconds?: number;
}

const nameOf = (object: KubeObject) => `${object.kind ?? '?'}/${object.metadata?.name ?? '?'}`;

function podSpecOf(object: KubeObject): PodSpec | undefined {
  const spec = object.spec as { template?: { spec?: PodSpec }; jobTemplate?: { spec?: { template?: { spec?: PodSpec } } } } | undefined;
  if (object.kind === 'Pod') return object.spec as PodSpec;
  return spec?.template?.spec ?? spec?.jobTemplate?.spec?.template?.spec;
}

function checkPod(object: KubeObject, pod: PodSpec, secretNames: ReadonlySet<string>, breaches: PolicyBreach[]): void {
  const name = nameOf(object);
  const breach = (rule: string, detail: string) => breaches.push({ object: name, rule, detail });
  if (pod.automountServiceAccountToken !== false) breach('no-api-token', 'automountServiceAccountToken is not false: the pods call no Kubernetes API');
  const podRunAsNonRoot = pod.securityContext?.runAsNonRoot === true;
  const labels = (object.metadata as { labels?: Record<string, string> } | undefined)?.labels ?? {};
  if (labels['app.kubernetes.io/component'] === 'worker' && (pod.terminationGracePeriodSeconds ?? 30) <= WORKER_DRAIN_SECONDS)
    breach(
      'drain-time',
      `terminationGracePeriodSeconds ${pod.terminationGracePeriodSeconds ?? 30} is not longer than the worker's ${WORKER_DRAIN_SECONDS} s drain`,
    );
  for (const container of [...(pod.containers ?? []), ...(pod.initContainers ?? [])]) {
    const where = `container ${container.name ?? '?'}`;
    const security = container.securityContext ?? {};
    const runAsUser = security.runAsUser ?? pod.securityContext?.runAsUser;
    if (!(security.runAsNonRoot === true || podRunAsNonRoot) || runAsUser === 0)
      breach('non-root', `${where} may run as root (runAsNonRoot not true, or runAsUser 0)`);
    if (security.allowPrivilegeEscalation !== false) breach('non-root', `${where}: allowPrivilegeEscalation is not false`);
    if (security.readOnlyRootFilesystem !== true) breach('read-only-root', `${where}: readOnlyRootFilesystem is not true`);
    const dropped = (security.capabilities as { drop?: string[] } | undefined)?.drop ?? [];
    if (!dropped.includes('ALL')) breach('non-root', `${where}: capabilities do not drop ALL`);
    if (!container.readinessProbe || !container.livenessProbe) breach('probes', `${where} has no ${container.readinessProbe ? 'liveness' : 'readiness'} probe`);
    const requests = container.resources?.requests ?? {};
    if (requests.cpu === undefined || requests.memory === undefined)
      breach('resource-requests', `${where} requests no ${requests.cpu === undefined ? 'cpu' : 'memory'}`);
    for (const variable of container.env ?? []) {
      if (variable.value === undefined) continue;
      if (secretNames.has(variable.name)) breach('secret-in-clear', `${where}: ${variable.name} is a secret, given as a literal (use secretEnv)`);
      else if (SECRET_VALUE.test(variable.value)) breach('secret-in-clear', `${where}: ${variable.name}'s literal value looks like a secret`);
    }
  }
}

function checkConfigMap(object: KubeObject, secretNames: ReadonlySet<string>, breaches: PolicyBreach[]): void {
  for (const [key, value] of Object.entries((object.data as Record<string, string> | undefined) ?? {})) {
    if (secretNames.has(key)) breaches.push({ object: nameOf(object), rule: 'secret-in-clear', detail: `${key} is a secret, in a ConfigMap (use secretEnv)` });
    else if (SECRET_VALUE.test(String(value))) breaches.push({ object: nameOf(object), rule: 'secret-in-clear', detail: `${key}'s value looks like a secret` });
  }
}

interface EgressRule {
  to?: { ipBlock?: { cidr?: string } }[];
}

function checkNetworkPolicy(object: KubeObject, breaches: PolicyBreach[]): void {
  const spec = (object.spec as { egress?: EgressRule[]; policyTypes?: string[] } | undefined) ?? {};
  const breach = (detail: string) => breaches.push({ object: nameOf(object), rule: 'egress-closed', detail });
  if (!spec.policyTypes?.includes('Egress')) breach('policyTypes does not include Egress: egress is not restricted');
  for (const [index, rule] of (spec.egress ?? []).entries()) {
    if (!rule.to || rule.to.length === 0) breach(`egress rule ${index} has no peers: it allows all egress`);
    for (const peer of rule.to ?? []) {
      const cidr = peer.ipBlock?.cidr;
      if (cidr === '0.0.0.0/0' || cidr === '::/0') breach(`egress rule ${index} allows ${cidr}: all egress`);
    }
  }
}

/** Every breach of the policy among `objects`; `secretNames` are the variables that are secrets (secretEnv's). */
export function policyBreaches(objects: readonly KubeObject[], secretNames: ReadonlySet<string>): PolicyBreach[] {
  const breaches: PolicyBreach[] = [];
  for (const object of objects) {
    if (object.kind === 'Secret')
      breaches.push({ object: nameOf(object), rule: 'secret-in-clear', detail: "the chart renders a Secret: its values would sit in the release's manifest" });
    if (object.kind === 'ConfigMap') checkConfigMap(object, secretNames, breaches);
    if (object.kind === 'NetworkPolicy') checkNetworkPolicy(object, breaches);
    const pod = podSpecOf(object);
    if (pod) checkPod(object, pod, secretNames, breaches);
  }
  return breaches;
}

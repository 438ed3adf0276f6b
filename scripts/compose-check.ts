/**
 * `npm run compose:check [-- <compose file>]`: validates temporal-compose.yml (or the file given) with
 * the real Docker Compose v2, no Docker engine needed, and prints what `up` would start.
 *   1. `docker-compose -f <file> config --quiet`: Compose's own parsing, schema validation,
 *      interpolation and cross-references (depends_on, secrets, configs, volumes). If it refuses the
 *      file, its error is printed as is and the exit code is non-zero.
 *   2. `config --format json`: the resolved model, printed per service (image or build, replicas,
 *      long-running or one-shot, ports, secrets, what it waits for).
 *   3. What Compose cannot know about this project: the search attributes the setup one-shot
 *      registers are exactly CONNECTION_SEARCH_ATTRIBUTES; the server's dynamic config holds the
 *      settings of scripts/lib/server-dynamic-config.ts (eager activities); every setting given to the app's services
 *      is a variable of .env.example (or AWS_*, read by the AWS SDK); each app service's
 *      environment, with stand-in values for its secrets, is accepted by the src/settings/ loader of
 *      the process it runs (worker with encryption on and the S3 store, console, sandbox); every
 *      dist/ file an app service runs is compiled from a source that exists; the worker's health
 *      check probes its WORKER_HEALTH_PORT; every file or folder a service bind-mounts exists and is
 *      mounted read-only; and the Prometheus config scrapes the worker on its WORKER_METRICS_PORT.
 *      (That the image builds and runs them: npm run image:check.)
 * Variables the file requires (`${NAME:?...}`: the lender's OpenID Connect provider) that are unset
 * here are given stand-ins, named on a line of their own; Compose without them refuses the file as
 * `up` would (test/compose/ shows it).
 * The last line starts with `compose-check:`. Compose: DOCKER_COMPOSE_PATH, else the build that
 * `bash scripts/provision-temporal.sh compose` leaves in the Temporal cache, else docker-compose on PATH.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { TypedSearchAttributes } from '@temporalio/common';
import { loadToolchainConfig } from './lib/toolchain-settings.js';
import { loadClientConfig } from '../src/settings/client.js';
import { loadConsoleConfig } from '../src/settings/console.js';
import { ConfigError } from '../src/settings/load.js';
import { loadSandboxConfig } from '../sandbox/settings.js';
import { loadWorkerConfig } from '../src/settings/worker.js';
import { CONNECTION_SEARCH_ATTRIBUTES } from '../src/contract/search-attributes.js';
import { isExecutableFile, onPath, PROJECT_ROOT, TEMPORAL_CACHE_DIR } from './lib/temporal-binaries.js';
import { SERVER_DYNAMIC_CONFIG } from './lib/server-dynamic-config.js';
import { secretStandIn } from './lib/secret-stand-ins.js';

/** Services built from this project's Dockerfile: their environment is our configuration. */
const APP_IMAGE = 'aggregation-connections:local';
/** The sandbox's own image (sandbox/Dockerfile): its environment is our configuration too. */
const SANDBOX_IMAGE = 'aggregation-sandbox:local';
const configuredByUs = (service: ComposeService) => service.image === APP_IMAGE || service.image === SANDBOX_IMAGE;
/** The one-shot that registers our search attributes. */
const SETUP_SERVICE = 'temporal-setup';
const DYNAMIC_CONFIG = 'temporal-dynamic-config';
/** The Temporal server, and its Web UI (signing in at the lender's provider). */
const SERVER_SERVICE = 'temporal';
const UI_SERVICE = 'temporal-ui';
/** Where the prometheus service reads its configuration (the image's default). */
const PROMETHEUS_CONFIG_TARGET = '/etc/prometheus/prometheus.yml';

export function dockerComposePath(explicit: string | undefined = loadToolchainConfig().paths.dockerCompose): string {
  const searched: string[] = [];
  if (explicit) {
    if (isExecutableFile(explicit)) return explicit;
    throw new Error(`DOCKER_COMPOSE_PATH=${explicit} is not an executable file`);
  }
  const cached = join(TEMPORAL_CACHE_DIR, 'bin', 'docker-compose');
  if (isExecutableFile(cached)) return cached;
  searched.push(cached);
  const found = onPath('docker-compose');
  if (found) return found;
  searched.push('docker-compose on PATH');
  throw new Error(
    `docker-compose not found (looked at: ${searched.join(', ')}). Run \`bash scripts/provision-temporal.sh compose\` ` +
      'to build Compose v2 into the Temporal cache (5 to 7 minutes once, needs Go), or point DOCKER_COMPOSE_PATH at one.',
  );
}

interface ComposeService {
  image?: string;
  build?: { context?: string; dockerfile?: string; dockerfile_inline?: string };
  deploy?: { replicas?: number };
  depends_on?: Record<string, { condition?: string }>;
  ports?: { published?: string; target?: number }[];
  secrets?: { source: string; target?: string }[];
  volumes?: { type: string; source?: string; target: string; read_only?: boolean }[];
  expose?: string[] | null;
  environment?: Record<string, string | null>;
  command?: string[] | null;
  entrypoint?: string[] | null;
  healthcheck?: { test?: string[]; disable?: boolean };
}

interface ComposeModel {
  name?: string;
  services: Record<string, ComposeService>;
  configs?: Record<string, { content?: string }>;
}

/** Compose on `file`, with `standIns` added to the environment it inherits. */
function runCompose(
  compose: string,
  file: string,
  args: string[],
  standIns: Readonly<Record<string, string>> = {},
): { status: number; stdout: string; stderr: string } {
  const env = Object.keys(standIns).length > 0 ? { ...process.env, ...standIns } : undefined;
  const result = spawnSync(compose, ['-f', file, ...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...(env ? { env } : {}) });
  if (result.error) throw result.error;
  return { status: result.status ?? 1, stdout: result.stdout, stderr: result.stderr };
}

/**
 * Stand-ins for the variables the file requires (`${NAME:?message}`: the lender's identity provider)
 * that Compose finds unset here, one by one as it names them, each shaped as the real one (an https
 * address, else a word): Compose refuses the file without them, as `up` would, and a check needs
 * none of the lender's values.
 */
function requiredVariableStandIns(compose: string, file: string): Record<string, string> {
  const standIns: Record<string, string> = {};
  for (;;) {
    const missing = /required variable ([A-Z][A-Z0-9_]*) is missing a value/.exec(runCompose(compose, file, ['config', '--quiet'], standIns).stderr)?.[1];
    if (missing === undefined || missing in standIns) return standIns;
    standIns[missing] = /(_URL|_ISSUER)$/.test(missing)
      ? `https://id.example.invalid/${missing.toLowerCase()}`
      : /_ROLE_MAP$/.test(missing)
        ? 'stand-in-group=viewer@stand-in-tenant'
        : `stand-in-${missing.toLowerCase()}`;
  }
}

/** The variable names .env.example documents (`NAME=` lines, commented or not). */
function documentedVariables(): Set<string> {
  const text = readFileSync(join(PROJECT_ROOT, '.env.example'), 'utf8');
  return new Set([...text.matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=/gm)].map((match) => match[1]!));
}

/** Problems Compose cannot see: drift between the file and the project's own sources. */
function projectProblems(model: ComposeModel, file: string): string[] {
  const problems: string[] = [];
  const setup = model.services[SETUP_SERVICE];
  if (!setup) {
    problems.push(`no ${SETUP_SERVICE} service registers the search attributes`);
  } else {
    const script = [...(setup.entrypoint ?? []), ...(setup.command ?? [])].join('\n');
    const registered = [...script.matchAll(/--name\s+(\S+)\s+--type\s+(\S+)/g)].map((m) => `${m[1]}=${m[2]}`).sort();
    const expected = CONNECTION_SEARCH_ATTRIBUTES.map(({ name, type }) => `${name}=${TypedSearchAttributes.toMetadataType(type)}`).sort();
    if (registered.join(',') !== expected.join(',')) {
      problems.push(`${SETUP_SERVICE} registers [${registered.join(', ')}], src/contract/search-attributes.ts declares [${expected.join(', ')}]`);
    }
  }
  const documented = documentedVariables();
  for (const [name, service] of Object.entries(model.services)) {
    if (!configuredByUs(service)) continue;
    const names = [...Object.keys(service.environment ?? {}), ...(service.secrets ?? []).map((s) => s.target ?? s.source)];
    for (const variable of names) {
      if (!documented.has(variable) && !variable.startsWith('AWS_') && variable !== 'WORKER_WORKFLOW_BUNDLE') {
        problems.push(`service ${name} sets ${variable}, which is not a variable of .env.example (the settings loaders would ignore it)`);
      }
    }
  }
  problems.push(
    ...configProblems(model),
    ...imagePathProblems(model),
    ...dynamicConfigProblems(model),
    ...monitoringProblems(model, file),
    ...identityProblems(model),
  );
  return problems;
}

/**
 * The Web UI signs people in at the provider, and Temporal checks the tokens it forwards: a UI
 * without sign-in shows every workflow to whoever reaches it, and a sign-in in front of a server that
 * checks no token gates nothing (test/prod-check/web-ui-sign-in.test.ts shows the pair working).
 */
function identityProblems(model: ComposeModel): string[] {
  const ui = model.services[UI_SERVICE];
  const server = model.services[SERVER_SERVICE];
  if (!ui || !server) return [];
  const problems: string[] = [];
  if (ui.environment?.TEMPORAL_AUTH_ENABLED !== 'true')
    problems.push(`${UI_SERVICE}: TEMPORAL_AUTH_ENABLED is not "true": the Web UI would show every workflow to whoever reaches it, signed in or not`);
  const authorizer = server.environment?.TEMPORAL_AUTH_AUTHORIZER;
  const claimMapper = server.environment?.TEMPORAL_AUTH_CLAIM_MAPPER;
  if (authorizer !== 'default' || claimMapper !== 'default') {
    problems.push(
      `${SERVER_SERVICE}: TEMPORAL_AUTH_AUTHORIZER=${authorizer ?? '(unset)'} and TEMPORAL_AUTH_CLAIM_MAPPER=${claimMapper ?? '(unset)'}, not default and default: Temporal would not check the tokens the Web UI forwards`,
    );
  }
  // The console: operators by identity at the same provider, never the shared token (one token opens every tenant and names nobody).
  for (const [name, service] of Object.entries(model.services)) {
    if (!isConsoleCommand(service)) continue;
    if (!service.environment?.CONSOLE_OIDC_ISSUER) problems.push(`service ${name}: CONSOLE_OIDC_ISSUER is unset: operators would not sign in at the provider`);
    const shared = [...Object.keys(service.environment ?? {}), ...(service.secrets ?? []).map((secret) => secret.target ?? secret.source)].includes(
      'CONSOLE_TOKEN',
    );
    if (shared) problems.push(`service ${name}: it is given CONSOLE_TOKEN, the dev stack's shared token, which opens every tenant and names nobody`);
  }
  return problems;
}

/**
 * Bind mounts (the Prometheus config, Grafana's provisioning and dashboards): Docker creates a missing
 * source as an empty directory at `up`, so each must exist, read-only. Sources are read relative to
 * the compose file, from the project (a copy of the file elsewhere is checked against the project's
 * files). The Prometheus config must scrape each worker service on its WORKER_METRICS_PORT, which the
 * worker must expose on the compose network and bind on all its interfaces.
 */
function monitoringProblems(model: ComposeModel, file: string): string[] {
  const problems: string[] = [];
  let prometheusConfig: { service: string; path: string; text: string } | undefined;
  for (const [name, service] of Object.entries(model.services)) {
    for (const mount of service.volumes ?? []) {
      if (mount.type !== 'bind' || !mount.source) continue;
      const path = relative(dirname(file), mount.source);
      if (!existsSync(join(PROJECT_ROOT, path))) {
        problems.push(`service ${name} mounts ./${path}, which does not exist (Docker would create an empty directory in its place)`);
      } else if (mount.target === PROMETHEUS_CONFIG_TARGET) {
        prometheusConfig = { service: name, path, text: readFileSync(join(PROJECT_ROOT, path), 'utf8') };
      }
      if (!mount.read_only) problems.push(`service ${name} mounts ./${path} writable: mount the project's files read-only (:ro)`);
    }
  }
  if (!prometheusConfig) return problems;
  // `- names: [worker]` ... `port: 9464` of each dns_sd_configs entry: what Prometheus scrapes.
  const scraped = [...prometheusConfig.text.matchAll(/names:\s*\[([^\]]*)\][^]*?port:\s*(\d+)/g)].flatMap(([, names, port]) =>
    names!.split(',').map((host) => `${host.trim().replace(/^['"]|['"]$/g, '')}:${port}`),
  );
  for (const [name, service] of Object.entries(model.services)) {
    if (service.image !== APP_IMAGE || !isWorkerCommand(service)) continue;
    const port = service.environment?.WORKER_METRICS_PORT;
    if (!port || port === '0') continue;
    if (!scraped.includes(`${name}:${port}`)) {
      problems.push(
        `${prometheusConfig.service} scrapes [${scraped.join(', ')}] (./${prometheusConfig.path}); service ${name} serves its metrics on ${name}:${port} (WORKER_METRICS_PORT)`,
      );
    }
    if (!(service.expose ?? []).includes(port)) problems.push(`service ${name} does not expose its WORKER_METRICS_PORT ${port} to ${prometheusConfig.service}`);
    const host = service.environment?.WORKER_METRICS_HOST ?? '127.0.0.1';
    if (/^(127\.|localhost$|::1$)/.test(host))
      problems.push(
        `service ${name}: WORKER_METRICS_HOST=${host} serves the metrics inside its container only; ${prometheusConfig.service} cannot scrape them`,
      );
  }
  return problems;
}

/** The server settings the worker is tuned for (scripts/lib/server-dynamic-config.ts) must be in the shipped dynamic config. */
function dynamicConfigProblems(model: ComposeModel): string[] {
  const content = model.configs?.[DYNAMIC_CONFIG]?.content;
  if (content === undefined) return [`no ${DYNAMIC_CONFIG} config with inline content`];
  return Object.entries(SERVER_DYNAMIC_CONFIG).flatMap(([key, value]) => {
    const escaped = key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const given = new RegExp(`^${escaped}:\\s*\\n\\s*-\\s*value:\\s*(\\S+)`, 'm').exec(content)?.[1];
    if (given === JSON.stringify(value)) return [];
    return [
      `${DYNAMIC_CONFIG} ${given === undefined ? 'does not set' : `sets ${given} for`} ${key}; scripts/lib/server-dynamic-config.ts has ${JSON.stringify(value)}`,
    ];
  });
}

/** The processes of the image, by the entry point a service's command runs (`dist/src/worker.js`, or a `.ts` source). */
const isWorkerCommand = (service: ComposeService) => /\bsrc\/worker\.[jt]s\b/.test((service.command ?? []).join(' '));
const isConsoleCommand = (service: ComposeService) => /\bsrc\/console\/server\.[jt]s\b/.test((service.command ?? []).join(' '));
const isSandboxCommand = (service: ComposeService) => /(?:^|\s)sandbox\/main\.ts\b/.test((service.command ?? []).join(' '));

/**
 * The image runs compiled code: every `dist/<path>.js` an app service's command or health check names
 * must be compiled from a `<path>.ts` of the project (tsconfig.build.json compiles src/ to dist/src/),
 * and the worker's health check must probe the port its WORKER_HEALTH_PORT opens.
 */
function imagePathProblems(model: ComposeModel): string[] {
  const problems: string[] = [];
  for (const [name, service] of Object.entries(model.services)) {
    if (service.image !== APP_IMAGE) continue;
    const words = [...(service.command ?? []), ...(service.healthcheck?.test ?? [])].join('\n');
    for (const [path, source] of words.matchAll(/(?:\.\/)?dist\/((?:src|scripts)\/[\w./-]+)\.js\b/g)) {
      if (!existsSync(join(PROJECT_ROOT, `${source}.ts`))) problems.push(`service ${name} runs ${path}, but there is no ${source}.ts to compile it from`);
    }
    if (isWorkerCommand(service)) {
      const port = service.environment?.WORKER_HEALTH_PORT;
      const probed = /^http:\/\/127\.0\.0\.1:(\d+)\/healthz$/.exec(service.healthcheck?.test?.at(-1) ?? '')?.[1];
      if (!port || probed !== port) {
        problems.push(`service ${name}: its health check probes port ${probed ?? '(none)'}, its WORKER_HEALTH_PORT is ${port ?? 'unset (off)'}`);
      }
    }
  }
  return problems;
}

/** Each app service's environment through the loader of the process its command runs. */
function configProblems(model: ComposeModel): string[] {
  const problems: string[] = [];
  const workers: { readonly name: string; readonly config: ReturnType<typeof loadWorkerConfig> }[] = [];
  for (const [name, service] of Object.entries(model.services)) {
    if (!configuredByUs(service)) continue;
    const env: NodeJS.ProcessEnv = { WORKER_WORKFLOW_BUNDLE: '/app/dist/workflow-bundle.js' };
    for (const [variable, value] of Object.entries(service.environment ?? {})) env[variable] = value ?? '';
    for (const secret of service.secrets ?? []) {
      const variable = secret.target ?? secret.source;
      env[variable] = secretStandIn(variable);
    }
    try {
      if (isWorkerCommand(service)) {
        const config = loadWorkerConfig(env);
        workers.push({ name, config });
        if (!config.encryption) problems.push(`service ${name}: the worker would store payloads unencrypted`);
        if (config.payloadStore.kind !== 's3') problems.push(`service ${name}: the worker's payload store is ${config.payloadStore.kind}, not s3`);
      } else if (isConsoleCommand(service)) {
        const config = loadConsoleConfig(env);
        loadClientConfig(env);
        if (!config.encryption) problems.push(`service ${name}: the console would serve no codec (encryption off)`);
      } else if (isSandboxCommand(service)) {
        loadSandboxConfig(env);
      }
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(`service ${name}: its settings loader refuses its environment: ${error.problems.join('; ')}`);
    }
  }
  problems.push(...poolProblems(workers));
  return problems;
}

function describeImage(service: ComposeService): string {
  if (!service.build) return service.image ?? '?';
  const built = service.build.dockerfile_inline !== undefined ? 'inline Dockerfile' : (service.build.dockerfile ?? 'Dockerfile');
  const context = service.build.context ? relative(PROJECT_ROOT, service.build.context) || '.' : '.';
  return `${service.image ?? '(unnamed)'} (build ${context}, ${built})`;
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function main(): number {
  const fileArgument = process.argv[2] ?? join(PROJECT_ROOT, 'temporal-compose.yml');
  const file = resolve(fileArgument);
  const fromCwd = relative(process.cwd(), file);
  const shown = fromCwd && !fromCwd.startsWith('..') ? fromCwd : file;
  let compose: string;
  try {
    compose = dockerComposePath();
  } catch (error) {
    console.error(`compose-check: ${(error as Error).message}`);
    return 1;
  }
  const short = runCompose(compose, file, ['version', '--short']).stdout.trim();
  const version = short ? `v${short.replace(/^v/, '')}` : '(unknown version)';
  console.log(`Docker Compose ${version} (${compose})`);
  const standIns = requiredVariableStandIns(compose, file);
  if (Object.keys(standIns).length > 0) {
    console.log(`required variables unset here, checked with stand-ins (\`config\` and \`up\` stop without them): ${Object.keys(standIns).sort().join(', ')}`);
  }

  const quiet = runCompose(compose, file, ['config', '--quiet'], standIns);
  if (quiet.status !== 0) {
    process.stderr.write(quiet.stderr || quiet.stdout);
    console.error(`compose-check: ${shown} is INVALID: docker-compose config --quiet exited ${quiet.status} (its error above)`);
    return quiet.status || 1;
  }
  // Compose's warnings (obsolete keys, unset variables) are worth seeing even when the file is valid.
  if (quiet.stderr.trim()) process.stderr.write(quiet.stderr);

  const services = runCompose(compose, file, ['config', '--services'], standIns);
  const json = runCompose(compose, file, ['config', '--format', 'json'], standIns);
  if (services.status !== 0 || json.status !== 0) {
    process.stderr.write(services.stderr + json.stderr);
    console.error(`compose-check: ${shown}: docker-compose config --services/--format json failed`);
    return 1;
  }
  const model = JSON.parse(json.stdout) as ComposeModel;
  const names = services.stdout.split('\n').filter(Boolean);

  // A service others wait for with service_completed_successfully is a one-shot.
  const oneShots = new Set<string>();
  for (const service of Object.values(model.services)) {
    for (const [dependency, { condition }] of Object.entries(service.depends_on ?? {})) {
      if (condition === 'service_completed_successfully') oneShots.add(dependency);
    }
  }
  const rows = [['SERVICE', 'IMAGE / BUILD', 'REPLICAS', 'RUNS', 'PORTS', 'SECRETS', 'WAITS FOR']];
  for (const name of names) {
    const service = model.services[name]!;
    const waits = Object.entries(service.depends_on ?? {}).map(
      ([dependency, { condition }]) => `${dependency} (${condition?.replace(/^service_/, '').replace('completed_successfully', 'completed') ?? 'started'})`,
    );
    rows.push([
      name,
      describeImage(service),
      String(service.deploy?.replicas ?? 1),
      oneShots.has(name) ? 'one-shot' : 'long-running',
      (service.ports ?? []).map((port) => `${port.published}->${port.target}`).join(',') || '-',
      (service.secrets ?? []).map((secret) => secret.target ?? secret.source).join(',') || '-',
      waits.join(', ') || '-',
    ]);
  }
  console.log(`\nservices of project ${model.name ?? '?'} (config --services): ${names.join(' ')}\n`);
  console.log(table(rows));

  const problems = projectProblems(model, file);
  if (problems.length > 0) {
    console.error(`\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    console.error(`compose-check: ${shown} is valid for Compose but out of step with the project: ${problems.length} problem(s) above`);
    return 1;
  }
  const replicas = names.map((name) => model.services[name]!.deploy?.replicas ?? 1).reduce((a, b) => a + b, 0);
  console.log(
    `\ncompose-check: ${shown} is valid (docker-compose ${version} config --quiet): ${names.length} services ` +
      `(${names.length - oneShots.size} long-running, ${oneShots.size} one-shot), ${replicas} containers; ` +
      'search attributes, app settings, monitoring files and the Web UI behind the provider match the project; nothing started (no Docker engine needed)',
  );
  return 0;
}

process.exitCode = main();

/**
 * With UNATTENDED_POOL=separate, some worker service must poll each queue: the service queue, and the
 * unattended pool's, or book refreshes would wait for a worker that never comes.
 */
function poolProblems(workers: readonly { readonly name: string; readonly config: ReturnType<typeof loadWorkerConfig> }[]): string[] {
  const separate = workers.filter(({ config }) => config.pool.unattended === 'separate');
  if (separate.length === 0) return [];
  const polled = new Set(workers.flatMap(({ config }) => config.pool.taskQueues));
  const needed = new Set(separate.flatMap(({ config }) => [config.temporal.taskQueue, config.pool.unattendedTaskQueue]));
  return [...needed]
    .filter((queue) => !polled.has(queue))
    .map(
      (queue) =>
        `no worker service polls ${queue} (UNATTENDED_POOL=separate on ${separate.map(({ name }) => name).join(', ')}): set WORKER_POOL on a worker service to poll it`,
    );
}

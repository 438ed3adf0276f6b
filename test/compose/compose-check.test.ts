// npm test: needs a server (a provisioned program: Docker Compose)
// temporal-compose.yml cannot rot unnoticed: `npm run compose:check` runs the real Docker Compose v2
// (built by scripts/provision-temporal.sh compose, which `npm test`'s pretest runs) on it, and on
// deliberately broken copies in a temp dir, which it must refuse. No Docker engine is involved.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCommand, type CommandRun } from '../helpers/command-run.js';
import { PROJECT_ROOT, TEMPORAL_CACHE_DIR } from '../../scripts/lib/temporal-binaries.js';
import { loadToolchainConfig } from '../../scripts/lib/toolchain-settings.js';
import { TEMPORAL_SERVER_VERSION } from '../../scripts/lib/temporal-versions.js';

const SCRIPT = join(PROJECT_ROOT, 'scripts', 'compose-check.ts');
/** The lender's OpenID Connect provider: the variables the file requires (a user sets them in .env). */
const PROVIDER_VARIABLES = ['CONSOLE_OIDC_CLIENT_ID', 'CONSOLE_ROLE_MAP', 'TEMPORAL_OIDC_ISSUER', 'TEMPORAL_OIDC_JWKS_URL', 'TEMPORAL_UI_OIDC_CLIENT_ID'];
const COMPOSE_FILE = join(PROJECT_ROOT, 'temporal-compose.yml');

const EXPECTED_SERVICES = [
  'console',
  'grafana',
  'minio',
  'minio-bucket',
  'postgresql',
  'prometheus',
  'sandbox',
  'temporal',
  'temporal-schema',
  'temporal-setup',
  'temporal-ui',
  'unattended-worker',
  'worker',
];

/** Runs compose-check.ts on `file` with the variables a user would not have set (no .env, no secrets). */
function composeCheck(file?: string): Promise<CommandRun> {
  const env = { ...process.env };
  for (const name of [
    ...PROVIDER_VARIABLES,
    'TEMPORAL_UI_OIDC_CLIENT_SECRET',
    'CONSOLE_OIDC_CLIENT_SECRET',
    'CONSOLE_SESSION_SECRET',
    'PAYLOAD_ENCRYPTION_KEY',
    'CONSOLE_TOKEN',
    'TEMPORAL_PORT',
    'TEMPORAL_UI_PORT',
    'SANDBOX_PORT',
    'CONSOLE_PORT',
    'GRAFANA_PORT',
    'PROMETHEUS_PORT',
  ])
    delete env[name];
  return runCommand(process.execPath, ['--import', 'tsx', SCRIPT, ...(file ? [file] : [])], { env });
}

function lastLine(text: string): string {
  return text.trimEnd().split('\n').at(-1) ?? '';
}

describe('npm run compose:check', { concurrency: true }, () => {
  let dir: string;
  let original: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'compose-check-'));
    original = await readFile(COMPOSE_FILE, 'utf8');
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** A copy of temporal-compose.yml with one change, in the temp dir. */
  async function brokenCopy(name: string, from: string | RegExp, to: string): Promise<string> {
    const text = original.replace(from, to);
    assert.notEqual(text, original, `the change for ${name} must apply to temporal-compose.yml`);
    const path = join(dir, `${name}.yml`);
    await writeFile(path, text);
    return path;
  }

  it('validates temporal-compose.yml with the real Compose and lists the services it would start', async () => {
    const run = await composeCheck();
    assert.equal(run.code, 0, `exit code; stderr:\n${run.stderr}\nstdout:\n${run.stdout}`);
    const services = /\(config --services\): (.+)$/m.exec(run.stdout)?.[1]?.split(' ').sort();
    assert.deepEqual(services, EXPECTED_SERVICES);
    assert.match(run.stdout, /^worker\s+aggregation-connections:local \(build \., Dockerfile\)\s+3\s+long-running/m);
    // Book refreshes on a pool of their own, scraped like the service pool's workers.
    assert.match(run.stdout, /^unattended-worker\s+aggregation-connections:local \(build \., Dockerfile\)\s+1\s+long-running/m);
    // Compose ships the release every stack here runs and tests (scripts/lib/temporal-versions.env).
    const release = TEMPORAL_SERVER_VERSION.replaceAll('.', '\\.');
    assert.match(run.stdout, new RegExp(`^temporal\\s+temporalio/server:${release}\\s+1\\s+long-running\\s+7233->7233`, 'm'));
    assert.match(run.stdout, new RegExp(`^temporal-schema\\s+temporalio/admin-tools:${release}\\s`, 'm'));
    assert.match(run.stdout, /^postgresql\s+postgres:15\s/m);
    // The monitoring services on pinned images, their UIs on the host (loopback only: see the file).
    assert.match(run.stdout, /^prometheus\s+prom\/prometheus:v\d+\.\d+\.\d+\s+1\s+long-running\s+9090->9090\s/m);
    assert.match(run.stdout, /^grafana\s+grafana\/grafana:\d+\.\d+\.\d+\s+1\s+long-running\s+3000->3000\s.*prometheus \(healthy\)/m);
    for (const oneShot of ['temporal-schema', 'temporal-setup', 'minio-bucket']) {
      assert.match(run.stdout, new RegExp(`^${oneShot}\\s.*\\bone-shot\\b`, 'm'), `${oneShot} is a one-shot`);
    }
    assert.match(lastLine(run.stdout), /^compose-check: .*temporal-compose\.yml is valid \(docker-compose v2\.\d+\.\d+ config --quiet\): 13 services/);
    // The lender's provider is not in the file: its settings are required, given stand-ins by the check.
    assert.match(
      run.stdout,
      new RegExp(
        `^required variables unset here, checked with stand-ins \\(\`config\` and \`up\` stop without them\\): ${PROVIDER_VARIABLES.join(', ')}$`,
        'm',
      ),
    );
    // The Web UI signs in at the provider, its client secret a compose secret.
    assert.match(
      run.stdout,
      /^temporal-ui\s+temporalio\/ui:\d+\.\d+\.\d+\s+1\s+long-running\s+8233->8080\s+TEMPORAL_AUTH_CLIENT_SECRET\s+temporal \(healthy\)/m,
    );
    // The console signs operators in at the same provider: its secrets are its client's and its sessions', no shared token.
    assert.match(run.stdout, /^console\s+aggregation-connections:local .*\s+PAYLOAD_ENCRYPTION_KEY,CONSOLE_OIDC_CLIENT_SECRET,CONSOLE_SESSION_SECRET\s/m);
  });

  it("is refused by Compose itself without each of the provider's settings, naming the variable to set", async () => {
    const compose = loadToolchainConfig().paths.dockerCompose ?? join(TEMPORAL_CACHE_DIR, 'bin', 'docker-compose');
    // One unset at a time, the others set: with several unset, Compose names whichever it meets first, in no fixed order.
    for (const missing of PROVIDER_VARIABLES) {
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        ...Object.fromEntries(PROVIDER_VARIABLES.map((name) => [name, `https://provider.example/${name.toLowerCase()}`])),
      };
      delete env[missing];
      const run = await runCommand(compose, ['-f', COMPOSE_FILE, 'config', '--quiet'], { env });
      assert.notEqual(run.code, 0, `${missing} unset`);
      assert.match(run.stderr, new RegExp(`required variable ${missing} is missing a value: set ${missing} to `), `${missing} unset`);
    }
  });

  it('refuses a copy whose Web UI serves without sign-in, or whose server checks no token', async () => {
    const file = await brokenCopy(
      'no-sign-in',
      /TEMPORAL_AUTH_AUTHORIZER: default\n([^]*)TEMPORAL_AUTH_ENABLED: "true"/,
      'TEMPORAL_AUTH_AUTHORIZER: ""\n$1TEMPORAL_AUTH_ENABLED: "false"',
    );
    const run = await composeCheck(file);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /temporal-ui: TEMPORAL_AUTH_ENABLED is not "true": the Web UI would show every workflow to whoever reaches it, signed in or not/);
    assert.match(
      run.stderr,
      /temporal: TEMPORAL_AUTH_AUTHORIZER= and TEMPORAL_AUTH_CLAIM_MAPPER=default, not default and default: Temporal would not check the tokens the Web UI forwards/,
    );
    assert.match(lastLine(run.stderr), /^compose-check: .* out of step with the project: 2 problem/);
  });

  it('refuses a copy whose console takes the shared token, or does not sign operators in', async () => {
    const file = await brokenCopy('console-token', / {6}CONSOLE_OIDC_ISSUER: .*\n/, '      CONSOLE_TOKEN: a-shared-token-for-everyone\n');
    const run = await composeCheck(file);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /service console: CONSOLE_OIDC_ISSUER is unset: operators would not sign in at the provider/);
    assert.match(run.stderr, /service console: it is given CONSOLE_TOKEN, the dev stack's shared token, which opens every tenant and names nobody/);
  });

  it('refuses a copy whose unattended pool has no worker', async () => {
    const file = await brokenCopy('no-unattended-worker', 'WORKER_POOL: unattended', 'WORKER_POOL: service');
    const run = await composeCheck(file);
    assert.equal(run.code, 1);
    assert.match(
      run.stderr,
      /no worker service polls aggregation-connections-unattended \(UNATTENDED_POOL=separate on [\w, -]+\): set WORKER_POOL on a worker service to poll it/,
    );
  });

  it("refuses a copy whose schema Compose rejects, with Compose's own error", async () => {
    const file = await brokenCopy('bad-replicas', 'replicas: 3', 'replicas: three');
    const run = await composeCheck(file);
    assert.notEqual(run.code, 0);
    assert.match(run.stderr, /replicas/);
    assert.match(lastLine(run.stderr), /^compose-check: .*bad-replicas\.yml is INVALID: docker-compose config --quiet exited \d+/);
    assert.doesNotMatch(run.stdout, /^compose-check:/m);
  });

  it('refuses a copy whose service waits for a service that does not exist', async () => {
    const file = await brokenCopy(
      'bad-dependency',
      /(\n {6})minio-bucket:(\n {8}condition: service_completed_successfully\n {6}sandbox:)/,
      '$1minio-buckets:$2',
    );
    const run = await composeCheck(file);
    assert.notEqual(run.code, 0);
    assert.match(run.stderr, /minio-buckets/);
    assert.match(lastLine(run.stderr), /is INVALID/);
  });

  it('refuses a copy whose service runs a dist/ file no source compiles to', async () => {
    const file = await brokenCopy('missing-entry', 'command: ["node", "dist/src/console/server.js"]', 'command: ["node", "dist/src/console/start.js"]');
    const run = await composeCheck(file);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /service console runs dist\/src\/console\/start\.js, but there is no src\/console\/start\.ts to compile it from/);
    assert.match(lastLine(run.stderr), /^compose-check: .* out of step with the project: 1 problem/);
  });

  it('refuses a copy whose worker health check probes another port than its WORKER_HEALTH_PORT', async () => {
    const file = await brokenCopy('health-port', 'WORKER_HEALTH_PORT: "8081"', 'WORKER_HEALTH_PORT: "9000"');
    const run = await composeCheck(file);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /service worker: its health check probes port 8081, its WORKER_HEALTH_PORT is 9000/);
  });

  it('refuses a copy whose worker serves its metrics on another port than Prometheus scrapes', async () => {
    const file = await brokenCopy('metrics-port', 'WORKER_METRICS_PORT: "9464"', 'WORKER_METRICS_PORT: "9465"');
    const run = await composeCheck(file);
    assert.equal(run.code, 1);
    assert.match(
      run.stderr,
      /prometheus scrapes \[worker:9464, unattended-worker:9464\] \(\.\/prometheus\/prometheus\.yml\); service worker serves its metrics on worker:9465 \(WORKER_METRICS_PORT\)/,
    );
    assert.match(run.stderr, /service worker does not expose its WORKER_METRICS_PORT 9465 to prometheus/);
    // The unattended pool's workers share the worker's environment (a YAML anchor): the same two problems.
    assert.match(run.stderr, /service unattended-worker does not expose its WORKER_METRICS_PORT 9465 to prometheus/);
    assert.match(lastLine(run.stderr), /^compose-check: .* out of step with the project: 4 problem/);
  });

  it('refuses a copy that mounts a dashboard folder the project does not have, or mounts it writable', async () => {
    const file = await brokenCopy('missing-mount', './grafana/dashboards:/etc/grafana/dashboards:ro', './grafana/dashbords:/etc/grafana/dashboards');
    const run = await composeCheck(file);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /service grafana mounts \.\/grafana\/dashbords, which does not exist \(Docker would create an empty directory in its place\)/);
    assert.match(run.stderr, /service grafana mounts \.\/grafana\/dashbords writable/);
    assert.match(lastLine(run.stderr), /^compose-check: .* out of step with the project: 2 problem/);
  });

  it('refuses a copy whose server dynamic config turns eager activities off', async () => {
    const file = await brokenCopy('no-eager-activities', /(system\.enableActivityEagerExecution:\s*\n\s*- value:) true/, '$1 false');
    const run = await composeCheck(file);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /temporal-dynamic-config sets false for system\.enableActivityEagerExecution; scripts\/lib\/server-dynamic-config\.ts has true/);
    assert.match(lastLine(run.stderr), /^compose-check: .* out of step with the project: 1 problem/);
  });

  it('refuses a copy whose server dynamic config leaves the queue readers at their default rate', async () => {
    const file = await brokenCopy('default-queue-readers', /\n\s+history\.transferProcessorMaxPollRPS:\s*\n\s*- value: 200\n\s*constraints: \{\}/, '');
    const run = await composeCheck(file);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /temporal-dynamic-config does not set history\.transferProcessorMaxPollRPS; scripts\/lib\/server-dynamic-config\.ts has 200/);
    assert.match(lastLine(run.stderr), /^compose-check: .* out of step with the project: 1 problem/);
  });

  it('refuses a copy that no longer registers one of our search attributes', async () => {
    const file = await brokenCopy('missing-search-attribute', / \\\n\s+--name LoginId --type Keyword/, '');
    const run = await composeCheck(file);
    assert.equal(run.code, 1);
    assert.match(
      run.stderr,
      /temporal-setup registers \[BookCadence=Keyword, ConnectionStatus=Keyword, CustomerId=Keyword, EndUserChallenge=Keyword, Institution=Keyword\]/,
    );
    assert.match(lastLine(run.stderr), /^compose-check: .* out of step with the project: 1 problem/);
  });
});

/**
 * security:check's attacks on operators by identity: a console process that signs operators in
 * through an OpenID Connect provider (scripts/lib/oidc-dev-provider.ts) with roles per tenant, and
 * no shared token; then tenant A's operator on tenant B's work through every console route, bearer
 * tokens of another tenant's operator, another application or nobody on the API, a viewer answering, a disabled identity still using its session, a forged and a changed session
 * cookie, and a production console given the shared token. Each is refused or got through.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openAuditStore } from '../../src/audit/audit-trail.js';
import { ConnectionsClient } from '../../src/client/index.js';
import { SESSION_COOKIE } from '../../src/console/sign-in.js';
import { SealedCookies } from '../../src/identity/sealed-cookie.js';
import { track } from '../chaos/processes.js';
import { freePort } from '../lib/free-port.js';
import { HttpBrowser } from '../lib/http-browser.js';
import { cliAs } from '../lib/cli-as.js';
import { DevOidcProvider } from '../lib/oidc-dev-provider.js';
import { PROJECT_ROOT } from '../lib/temporal-binaries.js';
import type { AttackResult } from './attacks.js';
import { startConsoleProcess, type ConsoleProcess } from './console-process.js';

const PASSWORD = randomBytes(12).toString('hex');
/** The console's client secret at the provider: searched for in the run's argv, logs and histories with the other secrets. */
export const CLIENT_SECRET = randomBytes(24).toString('hex');

export interface SignInConsole {
  readonly url: string;
  readonly provider: DevOidcProvider;
  readonly console: ConsoleProcess;
  /** A browser signed in as `username` (operator-a, viewer-a). */
  signedIn(username: string): Promise<HttpBrowser>;
  stop(): Promise<void>;
}

/** The provider and a console process on it: tenant A's operator and viewer, roles from their groups. */
export async function startSignInConsole(runDir: string, env: Readonly<Record<string, string>>, tenantA: string): Promise<SignInConsole> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const provider = await DevOidcProvider.start({
    identities: [
      { username: 'operator-a', password: PASSWORD, name: 'Operator of A', groups: ['a-ops'] },
      { username: 'viewer-a', password: PASSWORD, name: 'Viewer of A', groups: ['a-viewers'] },
      { username: 'cli-operator-a', password: PASSWORD, name: 'CLI Operator of A', groups: ['a-ops'] },
      { username: 'bearer-operator-a', password: PASSWORD, name: 'Bearer Operator of A', groups: ['a-ops'] },
    ],
    clients: [
      { clientId: 'console', clientSecret: CLIENT_SECRET, redirectUris: [`${url}/auth/callback`] },
      // The CLI: a public native client, any loopback port.
      { clientId: 'aggregation-cli', redirectUris: ['http://127.0.0.1/callback'] },
      // Another application of the same provider, whose tokens are not for the console.
      { clientId: 'expense-app', redirectUris: ['http://127.0.0.1/callback'] },
    ],
  });
  const consoleProcess = await startConsoleProcess(
    runDir,
    {
      ...env,
      CONSOLE_PORT: String(port),
      CONSOLE_PUBLIC_URL: url,
      CONSOLE_OIDC_ISSUER: provider.issuer,
      CONSOLE_OIDC_CLIENT_ID: 'console',
      CONSOLE_OIDC_CLIENT_SECRET: CLIENT_SECRET,
      CONSOLE_ROLE_MAP: `a-ops=operator@${tenantA},a-viewers=viewer@${tenantA}`,
      CONSOLE_OIDC_RECHECK_S: '1',
    },
    'console-sign-in',
  );
  return {
    url,
    provider,
    console: consoleProcess,
    async signedIn(username) {
      const browser = new HttpBrowser();
      const login = await browser.open(`${url}/`);
      await browser.submit(login, { username, password: PASSWORD });
      if (!browser.cookies.has(SESSION_COOKIE)) throw new Error(`security-check: ${username} could not sign in to the console`);
      return browser;
    },
    async stop() {
      await consoleProcess.stop();
      await provider.stop();
    },
  };
}

/** How many console routes operatorOnOtherTenant tries on tenant B's work. */
const PROBED_ROUTES = 10;

const call = (browser: HttpBrowser, base: string, path: string, body?: unknown) =>
  browser.request(
    `${base}${path}`,
    body === undefined ? {} : { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', origin: base } },
  );

/** Tenant A's operator on B's connection, refresh, logins and payloads, through every console route: refused when every one answers 403 (the codec: not-permitted). */
export async function operatorOnOtherTenant(
  console_: SignInConsole,
  tenantB: string,
  connectionOfB: string,
  answer: unknown,
  payloadsOfB: readonly unknown[],
): Promise<AttackResult> {
  const name = "tenant A's operator on tenant B's work, through every console route";
  const operator = await console_.signedIn('operator-a');
  const id = encodeURIComponent(connectionOfB);
  const refresh = encodeURIComponent(`refresh-${tenantB}:nightly-1`);
  // A well-formed login id, so that the role (not the input's shape) is what refuses.
  const login = randomUUID();
  const routes: [string, unknown][] = [
    [`/api/connections/${id}`, undefined],
    [`/api/connections/${id}/answer`, answer],
    [`/api/connections/${id}/cancel`, {}],
    [`/api/connections?customer=${tenantB}`, undefined],
    [`/api/books/refreshes?customer=${tenantB}`, undefined],
    [`/api/books/refreshes/${refresh}`, undefined],
    [`/api/books/refreshes/${refresh}/pause`, {}],
    [`/api/schedules?customer=${tenantB}`, undefined],
    [`/api/schedules/${login}/pause`, { customer: tenantB }],
    [`/api/logins/${login}/forget`, { customer: tenantB }],
  ];
  const through: string[] = [];
  for (const [path, body] of routes) {
    const visit = await call(operator, console_.url, path, body);
    if (visit.status !== 403) through.push(`${body === undefined ? 'GET' : 'POST'} ${path}: HTTP ${visit.status}`);
  }
  const codec = await call(operator, console_.url, '/codec/decode', { payloads: payloadsOfB });
  const states = ((JSON.parse(codec.body) as { payloads?: { data?: string }[] }).payloads ?? []).map((payload) => {
    try {
      return (JSON.parse(Buffer.from(payload.data ?? '', 'base64').toString('utf8')) as { undecodable?: { state?: string } }).undecodable?.state;
    } catch {
      return undefined;
    }
  });
  if (codec.status !== 200 || states.length !== payloadsOfB.length || !states.every((state) => state === 'not-permitted'))
    through.push(`POST /codec/decode: HTTP ${codec.status}, ${states.filter((state) => state !== 'not-permitted').length} payload(s) not refused`);
  const refused = through.length === 0 && payloadsOfB.length > 0 && routes.length === PROBED_ROUTES;
  return {
    name,
    refused,
    detail: refused
      ? `${routes.length} routes answered 403 and the codec refused ${payloadsOfB.length} payload(s) of ${tenantB} as not-permitted`
      : through.join('; ') || 'no payloads of B to try',
  };
}

/**
 * Tenant A's operator's probes of B (operatorOnOtherTenant, run before), unrecorded: refused when the
 * console's audit trail holds each route's refusal (403) and the codec's refused payloads of B,
 * under the operator's name, and none of them as done.
 */
export async function probesUnrecorded(console_: SignInConsole, tenantB: string, since: Date): Promise<AttackResult> {
  const name = "tenant A's operator probing tenant B, left out of the audit trail";
  const store = openAuditStore(console_.console.auditStore);
  try {
    const ofB = (await store.query({ tenant: tenantB, from: since, limit: 1_000 })).filter((entry) => entry.actor.name === 'Operator of A');
    const refusals = ofB.filter((entry) => entry.outcome === 'refused');
    const done = ofB.filter((entry) => entry.outcome === 'ok');
    const codec = refusals.some((entry) => entry.action === 'decode' && entry.outcomeDetail === 'NotPermitted');
    const refused = refusals.length >= PROBED_ROUTES && codec && done.length === 0;
    return {
      name,
      refused,
      detail: `${refusals.length} refusal(s) of tenant ${tenantB}'s work recorded under "Operator of A" (codec: ${codec ? 'recorded' : 'MISSING'}), ${done.length} recorded as done`,
    };
  } finally {
    await store.close();
  }
}

/** The CLI in this process as `username` of the provider, on the real Temporal (connections counted). */
function cliOf(console_: SignInConsole, env: Readonly<Record<string, string>>, username: string) {
  return cliAs({
    env: { ...env, CLI_OIDC_ISSUER: console_.provider.issuer },
    username,
    password: PASSWORD,
    connect: (config) => ConnectionsClient.connect(config),
    sleep: (ms) => delay(ms),
  });
}

/**
 * Bearer tokens on the console's API: tenant A's operator's own token (from the CLI's login) on B's
 * connection, the same person's token issued to another application of the provider, and a made-up
 * token. Refused when the first answers 403 (and works on A: the route is not simply closed), the
 * other two 401 BearerTokenRefused, and B's connection still waits.
 */
export async function bearerTokenMisuse(
  console_: SignInConsole,
  runDir: string,
  connectionOfA: string,
  connectionOfB: string,
  answer: unknown,
  stillWaiting: () => Promise<boolean>,
): Promise<AttackResult> {
  const name = "bearer tokens on the console's API: another tenant's connection, another application's token, a made-up one";
  const tokenAs = async (clientId: string) => {
    const file = join(runDir, 'bearer', `${clientId}.json`);
    const login = await cliOf(
      console_,
      { CLI_OIDC_CLIENT_ID: clientId, CLI_CREDENTIALS_FILE: file, AUDIT_STORE: `file:${join(runDir, 'bearer-audit.jsonl')}` },
      'bearer-operator-a',
    ).run(['login']);
    if (login.code !== 0) throw new Error(`security-check: bearer-operator-a could not sign in as ${clientId}: ${login.err.slice(0, 200)}`);
    return (JSON.parse(await readFile(file, 'utf8')) as { accessToken: string }).accessToken;
  };
  const send = async (token: string, path: string, body?: unknown) => {
    const response = await fetch(`${console_.url}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const error = ((await response.json().catch(() => ({}))) as { error?: string }).error;
    return `${response.status}${error ? ` ${error}` : ''}`;
  };
  const own = await tokenAs('aggregation-cli');
  const onA = await send(own, `/api/connections/${encodeURIComponent(connectionOfA)}`);
  const onB = await send(own, `/api/connections/${encodeURIComponent(connectionOfB)}/answer`, answer);
  const foreign = await send(await tokenAs('expense-app'), `/api/connections/${encodeURIComponent(connectionOfB)}/answer`, answer);
  const madeUp = await send(randomBytes(32).toString('base64url'), `/api/connections/${encodeURIComponent(connectionOfB)}/answer`, answer);
  const waiting = await stillWaiting();
  const refused = onA === '200' && onB.startsWith('403') && foreign === '401 BearerTokenRefused' && madeUp === '401 BearerTokenRefused' && waiting;
  return {
    name,
    refused,
    detail: `own token on A: ${onA}; on B: ${onB}; another application's token: ${foreign}; made-up: ${madeUp}; B's connection ${waiting ? 'still waits' : 'WAS ANSWERED'}`,
  };
}

/**
 * Tenant A's operator on tenant B's work through the CLI's commands, with CLI_ROLE_MAP: refused when
 * every command exits 1 naming the role it takes, before the CLI opens Temporal.
 */
export async function operatorCommandsOnOtherTenant(
  console_: SignInConsole,
  runDir: string,
  env: Readonly<Record<string, string>>,
  tenantA: string,
  tenantB: string,
  connectionOfB: string,
): Promise<AttackResult> {
  const name = "tenant A's operator on tenant B's work, through every CLI command";
  const cli = cliOf(
    console_,
    {
      ...env,
      CLI_CREDENTIALS_FILE: join(runDir, 'cli-roles', 'credentials.json'),
      AUDIT_STORE: `file:${join(runDir, 'cli-roles-audit.jsonl')}`,
      CLI_ROLE_MAP: `a-ops=operator@${tenantA}`,
      AGGREGATOR_CUSTOMER_ID: tenantA,
    },
    'bearer-operator-a',
  );
  const signedIn = await cli.run(['login']);
  if (signedIn.code !== 0) return { name, refused: false, detail: `the CLI could not sign in first: ${signedIn.err.slice(0, 200)}` };
  const login = randomUUID();
  const refresh = `book-${tenantB}:nightly-1`;
  const commands = [
    ['show', connectionOfB],
    ['watch', connectionOfB],
    ['activity', connectionOfB],
    ['answer', connectionOfB, 'verified'],
    ['list', '--customer', tenantB],
    ['start', '--application-id', 'app-1', '--customer', tenantB],
    ['forget', login, '--customer', tenantB],
    ['refresh', 'pause', login, '--customer', tenantB],
    ['refresh', 'latest', login, '--customer', tenantB],
    ['book', 'run', '--customer', tenantB],
    ['book', 'progress', refresh],
    ['book', 'pause', refresh],
    ['tenant', 'forget', tenantB, '--yes'],
    ['audit', '--customer', tenantB],
    ['budget', 'set', '--total', '5'],
  ];
  const through: string[] = [];
  for (const command of commands) {
    const result = await cli.run(command);
    if (result.code !== 1 || !/may not \w+ on (tenant|the whole fleet).*: it takes the \w+ role/.test(result.err))
      through.push(`${command.slice(0, 2).join(' ')}: exit ${result.code} ${result.err.slice(0, 120)}`);
  }
  const refused = through.length === 0 && cli.connects() === 0;
  return {
    name,
    refused,
    detail: refused
      ? `${commands.length} commands refused by role before Temporal was opened`
      : `${through.join('; ')}; Temporal connections opened: ${cli.connects()}`,
  };
}

/**
 * An operator the provider disabled, still holding the CLI's credentials, answering through the CLI:
 * refused when the command fails naming the revoked sign-in before it reaches Temporal (the CLI's
 * Temporal connection is never opened) and the connection still waits.
 */
export async function revokedCliOperator(
  console_: SignInConsole,
  runDir: string,
  env: Readonly<Record<string, string>>,
  connection: string,
  stillWaiting: () => Promise<boolean>,
): Promise<AttackResult> {
  const name = 'a disabled identity answering through the CLI with its kept credentials';
  const cli = cliOf(
    console_,
    { ...env, CLI_CREDENTIALS_FILE: join(runDir, 'cli', 'credentials.json'), AUDIT_STORE: `file:${join(runDir, 'cli-audit.jsonl')}` },
    'cli-operator-a',
  );
  const signedIn = await cli.run(['login']);
  if (signedIn.code !== 0) return { name, refused: false, detail: `the CLI could not sign in first: ${signedIn.err.slice(0, 200)}` };
  console_.provider.disable('cli-operator-a');
  const answer = await cli.run(['answer', connection, 'verified']);
  const waiting = await stillWaiting();
  const named = /the provider no longer accepts the sign-in of CLI Operator of A/.test(answer.err);
  const refused = answer.code === 1 && named && cli.connects() === 0 && waiting;
  return {
    name,
    refused,
    detail: `exit ${answer.code}, ${named ? 'naming the revoked sign-in' : `said: ${answer.err.slice(0, 160)}`}; Temporal connections opened: ${cli.connects()}; the connection ${waiting ? 'still waits' : 'WAS ANSWERED'}`,
  };
}

/**
 * An answer while the console cannot write its audit trail (its store is down or full): refused when
 * the console answers 503 AuditUnavailable and the connection is still waiting, so nothing is done
 * that nobody could later see.
 */
export async function answerUnrecorded(
  runDir: string,
  env: Readonly<Record<string, string>>,
  connection: string,
  answer: unknown,
  stillWaiting: () => Promise<boolean>,
): Promise<AttackResult> {
  const name = 'an answer sent while the audit trail cannot be written';
  const token = randomBytes(24).toString('hex');
  // A store whose directory is a file: every write fails, as with a database that is down.
  const unwritable = await startConsoleProcess(
    runDir,
    { ...env, CONSOLE_TOKEN: token, AUDIT_STORE: `file:${process.execPath}/audit.jsonl` },
    'console-audit-down',
  );
  try {
    const response = await fetch(`${unwritable.url}/api/connections/${encodeURIComponent(connection)}/answer`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', origin: unwritable.url },
      body: JSON.stringify(answer),
    });
    const body = (await response.json().catch(() => ({}))) as { error?: string };
    const waiting = await stillWaiting();
    const refused = response.status === 503 && body.error === 'AuditUnavailable' && waiting;
    return { name, refused, detail: `HTTP ${response.status} ${body.error ?? ''}; the connection ${waiting ? 'still waits for its answer' : 'WAS ANSWERED'}` };
  } finally {
    await unwritable.stop();
  }
}

/** A viewer of A answering A's connection: refused when 403 and the connection is still waiting. */
export async function viewerAnswering(
  console_: SignInConsole,
  connectionOfA: string,
  answer: unknown,
  stillWaiting: () => Promise<boolean>,
): Promise<AttackResult> {
  const name = 'a viewer answering a challenge';
  const viewer = await console_.signedIn('viewer-a');
  const visit = await call(viewer, console_.url, `/api/connections/${encodeURIComponent(connectionOfA)}/answer`, answer);
  const waiting = await stillWaiting();
  const refused = visit.status === 403 && waiting;
  return {
    name,
    refused,
    detail: `HTTP ${visit.status}${refused ? `: ${(JSON.parse(visit.body) as { message?: string }).message?.slice(0, 120) ?? ''}` : `, still waiting: ${waiting}`}`,
  };
}

/** An identity the provider disabled, still holding its session: refused when the console ends it (401 SessionRevoked) within the recheck. */
export async function revokedIdentity(console_: SignInConsole): Promise<AttackResult> {
  const name = 'a disabled identity using its session';
  const viewer = await console_.signedIn('viewer-a');
  const before = await call(viewer, console_.url, '/api/me');
  console_.provider.disable('viewer-a');
  await delay(1_200);
  const after = await call(viewer, console_.url, '/api/me');
  const code = after.status === 401 ? (JSON.parse(after.body) as { error?: string }).error : undefined;
  const refused = before.status === 200 && code === 'SessionRevoked';
  return { name, refused, detail: `before: HTTP ${before.status}; after the provider disabled it: HTTP ${after.status} ${code ?? ''}` };
}

/** A session cookie sealed under another key (claiming every role), and a real one changed: refused when both answer 401 SessionInvalid. */
export async function forgedSession(console_: SignInConsole): Promise<AttackResult> {
  const name = 'a forged and a changed session cookie';
  const forger = new HttpBrowser();
  forger.cookies.set(
    SESSION_COOKIE,
    await new SealedCookies(randomBytes(32)).seal('session', { sub: 'mallory', name: 'Mallory', roles: [['*', ['admin']]], at: 'x' }, Date.now() + 3_600_000),
  );
  const forged = await call(forger, console_.url, '/api/connections');
  const operator = await console_.signedIn('operator-a');
  const session = operator.cookies.get(SESSION_COOKIE) ?? '';
  operator.cookies.set(SESSION_COOKIE, `${session.slice(0, 30)}${session[30] === 'A' ? 'B' : 'A'}${session.slice(31)}`);
  const changed = await call(operator, console_.url, '/api/connections');
  const codeOf = (visit: { status: number; body: string }) =>
    visit.status === 401 ? (JSON.parse(visit.body) as { error?: string }).error : `HTTP ${visit.status}`;
  const refused = codeOf(forged) === 'SessionInvalid' && codeOf(changed) === 'SessionInvalid';
  return { name, refused, detail: `forged: ${codeOf(forged) ?? ''}; changed: ${codeOf(changed) ?? ''}` };
}

/** A console in production mode given the shared token: refused when it will not start, naming CONSOLE_TOKEN. */
export async function sharedTokenInProduction(env: Readonly<Record<string, string>>): Promise<AttackResult> {
  const name = 'the shared console token on a production console';
  const token = randomBytes(24).toString('hex');
  const child = track(
    spawn(process.execPath, ['--import', 'tsx', 'src/console/server.ts'], {
      cwd: PROJECT_ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env, CONSOLE_PORT: '0', CONSOLE_MODE: 'production', CONSOLE_TOKEN: token },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exit = await Promise.race([
    new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code))),
    delay(60_000).then(() => 'running' as const),
  ]);
  if (exit === 'running') child.kill('SIGKILL');
  const named = /CONSOLE_TOKEN: is refused with CONSOLE_MODE=production/.test(output);
  const refused = exit !== 'running' && exit !== 0 && named && !output.includes(token);
  return {
    name,
    refused,
    detail: refused
      ? `the console exited ${String(exit)} before it listened, naming CONSOLE_TOKEN`
      : `exit ${String(exit)}, named: ${named}, token printed: ${output.includes(token)}`,
  };
}

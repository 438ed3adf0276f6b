/**
 * security:check's attacks on operators by identity: a console process that signs operators in
 * through an OpenID Connect provider (scripts/lib/oidc-dev-provider.ts) with roles per tenant, and
 * no shared token; then tenant A's operator on tenant B's work through every console route, a
 * viewer answering, a disabled identity still using its session, a forged and a changed session
 * cookie, and a production console given the shared token. Each is refused or got through.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import { join } from 'node:path';
import { openAuditStore } from '../../src/audit/audit-trail.js';
import { runCli } from '../../src/client/cli/run-cli.js';
import { ConnectionsClient } from '../../src/client/index.js';
import { SESSION_COOKIE } from '../../src/client/console/sign-in.js';
import { SealedCookies } from '../../src/identity/sealed-cookie.js';
import { track } from '../chaos/processes.js';
import { freePort } from '../lib/free-port.js';
import { HttpBrowser } from '../lib/http-browser.js';
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
    ],
    clients: [
      { clientId: 'console', clientSecret: CLIENT_SECRET, redirectUris: [`${url}/auth/callback`] },
      // The CLI: a public native client, any loopback port.
      { clientId: 'aggregation-cli', redirectUris: ['http://127.0.0.1/callback'] },
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
  browser.request(`${base}${path}`, body === undefined ? {} : { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', origin: base } });

/** Tenant A's operator on B's connection, refresh, logins and payloads, through every console route: refused when every one answers 403 (the codec: not-permitted). */
export async function operatorOnOtherTenant(console_: SignInConsole, tenantB: string, connectionOfB: string, answer: unknown, payloadsOfB: readonly unknown[]): Promise<AttackResult> {
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
  if (codec.status !== 200 || states.length !== payloadsOfB.length || !states.every((state) => state === 'not-permitted')) through.push(`POST /codec/decode: HTTP ${codec.status}, ${states.filter((state) => state !== 'not-permitted').length} payload(s) not refused`);
  const refused = through.length === 0 && payloadsOfB.length > 0 && routes.length === PROBED_ROUTES;
  return { name, refused, detail: refused ? `${routes.length} routes answered 403 and the codec refused ${payloadsOfB.length} payload(s) of ${tenantB} as not-permitted` : through.join('; ') || 'no payloads of B to try' };
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
    return { name, refused, detail: `${refusals.length} refusal(s) of tenant ${tenantB}'s work recorded under "Operator of A" (codec: ${codec ? 'recorded' : 'MISSING'}), ${done.length} recorded as done` };
  } finally {
    await store.close();
  }
}

/**
 * An operator the provider disabled, still holding the CLI's credentials, answering through the CLI:
 * refused when the command fails naming the revoked sign-in before it reaches Temporal (the CLI's
 * Temporal connection is never opened) and the connection still waits.
 */
export async function revokedCliOperator(console_: SignInConsole, runDir: string, env: Readonly<Record<string, string>>, connection: string, stillWaiting: () => Promise<boolean>): Promise<AttackResult> {
  const name = 'a disabled identity answering through the CLI with its kept credentials';
  const cliEnv = { ...env, CLI_OIDC_ISSUER: console_.provider.issuer, CLI_CREDENTIALS_FILE: join(runDir, 'cli', 'credentials.json'), AUDIT_STORE: `file:${join(runDir, 'cli-audit.jsonl')}` };
  let connects = 0;
  let browsing: Promise<unknown> = Promise.resolve();
  const run = async (args: string[]) => {
    const err: string[] = [];
    const code = await runCli(args, {
      out: (text) => {
        const address = /^\s+(http\S+)$/m.exec(text)?.[1];
        if (address) {
          const browser = new HttpBrowser();
          browsing = browser.open(address).then((form) => browser.submit(form, { username: 'cli-operator-a', password: PASSWORD }));
        }
      },
      err: (line) => err.push(line),
      readStdin: () => Promise.resolve(''),
      env: cliEnv,
      connect: (config) => {
        connects += 1;
        return ConnectionsClient.connect(config);
      },
      now: () => Date.now(),
      sleep: (ms) => delay(ms),
    });
    return { code, err: err.join('\n') };
  };
  const signedIn = await run(['login']);
  await browsing;
  if (signedIn.code !== 0) return { name, refused: false, detail: `the CLI could not sign in first: ${signedIn.err.slice(0, 200)}` };
  console_.provider.disable('cli-operator-a');
  const answer = await run(['answer', connection, 'verified']);
  const waiting = await stillWaiting();
  const named = /the provider no longer accepts the sign-in of CLI Operator of A/.test(answer.err);
  const refused = answer.code === 1 && named && connects === 0 && waiting;
  return { name, refused, detail: `exit ${answer.code}, ${named ? 'naming the revoked sign-in' : `said: ${answer.err.slice(0, 160)}`}; Temporal connections opened: ${connects}; the connection ${waiting ? 'still waits' : 'WAS ANSWERED'}` };
}

/**
 * An answer while the console cannot write its audit trail (its store is down or full): refused when
 * the console answers 503 AuditUnavailable and the connection is still waiting, so nothing is done
 * that nobody could later see.
 */
export async function answerUnrecorded(runDir: string, env: Readonly<Record<string, string>>, connection: string, answer: unknown, stillWaiting: () => Promise<boolean>): Promise<AttackResult> {
  const name = 'an answer sent while the audit trail cannot be written';
  const token = randomBytes(24).toString('hex');
  // A store whose directory is a file: every write fails, as with a database that is down.
  const unwritable = await startConsoleProcess(runDir, { ...env, CONSOLE_TOKEN: token, AUDIT_STORE: `file:${process.execPath}/audit.jsonl` }, 'console-audit-down');
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
export async function viewerAnswering(console_: SignInConsole, connectionOfA: string, answer: unknown, stillWaiting: () => Promise<boolean>): Promise<AttackResult> {
  const name = 'a viewer answering a challenge';
  const viewer = await console_.signedIn('viewer-a');
  const visit = await call(viewer, console_.url, `/api/connections/${encodeURIComponent(connectionOfA)}/answer`, answer);
  const waiting = await stillWaiting();
  const refused = visit.status === 403 && waiting;
  return { name, refused, detail: `HTTP ${visit.status}${refused ? `: ${(JSON.parse(visit.body) as { message?: string }).message?.slice(0, 120) ?? ''}` : `, still waiting: ${waiting}`}` };
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
  forger.cookies.set(SESSION_COOKIE, await new SealedCookies(randomBytes(32)).seal('session', { sub: 'mallory', name: 'Mallory', roles: [['*', ['admin']]], at: 'x' }, Date.now() + 3_600_000));
  const forged = await call(forger, console_.url, '/api/connections');
  const operator = await console_.signedIn('operator-a');
  const session = operator.cookies.get(SESSION_COOKIE) ?? '';
  operator.cookies.set(SESSION_COOKIE, `${session.slice(0, 30)}${session[30] === 'A' ? 'B' : 'A'}${session.slice(31)}`);
  const changed = await call(operator, console_.url, '/api/connections');
  const codeOf = (visit: { status: number; body: string }) => (visit.status === 401 ? (JSON.parse(visit.body) as { error?: string }).error : `HTTP ${visit.status}`);
  const refused = codeOf(forged) === 'SessionInvalid' && codeOf(changed) === 'SessionInvalid';
  return { name, refused, detail: `forged: ${codeOf(forged) ?? ''}; changed: ${codeOf(changed) ?? ''}` };
}

/** A console in production mode given the shared token: refused when it will not start, naming CONSOLE_TOKEN. */
export async function sharedTokenInProduction(env: Readonly<Record<string, string>>): Promise<AttackResult> {
  const name = 'the shared console token on a production console';
  const token = randomBytes(24).toString('hex');
  const child = track(
    spawn(process.execPath, ['--import', 'tsx', 'src/client/console/server.ts'], {
      cwd: PROJECT_ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env, CONSOLE_PORT: '0', CONSOLE_MODE: 'production', CONSOLE_TOKEN: token },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exit = await Promise.race([new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code))), delay(60_000).then(() => 'running' as const)]);
  if (exit === 'running') child.kill('SIGKILL');
  const named = /CONSOLE_TOKEN: is refused with CONSOLE_MODE=production/.test(output);
  const refused = exit !== 'running' && exit !== 0 && named && !output.includes(token);
  return { name, refused, detail: refused ? `the console exited ${String(exit)} before it listened, naming CONSOLE_TOKEN` : `exit ${String(exit)}, named: ${named}, token printed: ${output.includes(token)}` };
}

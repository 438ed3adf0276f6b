/**
 * The CLI's commands checked by role (CLI_ROLE_MAP), against a real provider (oidc-provider): with a
 * role map, nobody signed in may run a command but signing in; tenant A's operator is refused an
 * answer on B's connection, a viewer an answer on A's, an operator the fleet's budget and an
 * unscoped list (told which tenants it may read), each before the CLI opens Temporal and each
 * recorded as refused under the operator; what the roles allow goes on to Temporal (absent here, so
 * it fails there, after the check). Without a role map nothing is checked, as before.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FileAuditStore } from '../../src/audit/file-audit-store.js';
import { DevOidcProvider } from '../../scripts/lib/oidc-dev-provider.js';
import { cliAs as cliAsPerson } from '../../scripts/lib/cli-as.js';

const PASSWORD = 'correct horse battery staple';
const NO_TEMPORAL = 'Temporal is not there in this test';

let provider: DevOidcProvider;
let dir: string;

interface Run {
  readonly code: number;
  readonly err: string;
  /** How many times the command asked for its Temporal connection. */
  readonly connects: number;
}

/** The CLI in-process as `username` (its own credentials file), signing in first when `login` is the command. */
async function cliAs(username: string, args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<Run> {
  const cli = cliAsPerson({
    env: {
      CLI_OIDC_ISSUER: provider.issuer,
      CLI_CREDENTIALS_FILE: join(dir, `${username}.json`),
      AUDIT_STORE: `file:${join(dir, 'audit.jsonl')}`,
      CLI_ROLE_MAP: 'a-ops=operator@lender-a,a-viewers=viewer@lender-a,platform=admin@*',
      AGGREGATOR_CUSTOMER_ID: 'lender-a',
      ...extraEnv,
    },
    username,
    password: PASSWORD,
    connect: () => Promise.reject(new Error(NO_TEMPORAL)),
  });
  return { ...(await cli.run(args)), connects: cli.connects() };
}

const auditEntries = () => new FileAuditStore(join(dir, 'audit.jsonl')).query({ limit: 1_000 });

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cli-roles-'));
  provider = await DevOidcProvider.start({
    identities: [
      { username: 'olga', password: PASSWORD, name: 'Olga Operator', groups: ['a-ops'] },
      { username: 'vic', password: PASSWORD, name: 'Vic Viewer', groups: ['a-viewers'] },
      { username: 'pia', password: PASSWORD, name: 'Pia Platform', groups: ['platform'] },
    ],
    clients: [{ clientId: 'aggregation-cli', redirectUris: ['http://127.0.0.1/callback'] }],
  });
  for (const username of ['olga', 'vic', 'pia']) assert.equal((await cliAs(username, ['login'])).code, 0, `${username} signs in`);
});

after(async () => {
  await provider?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("the CLI's commands checked by role", () => {
  it('refuses every command but signing in to nobody signed in', async () => {
    const nobody = await cliAs('nobody', ['show', 'connection-lender-a:app-1']);
    assert.equal(nobody.code, 1);
    assert.match(nobody.err, /commands are checked against CLI_ROLE_MAP, so they need a signed-in operator \(login\): nobody is signed in here/);
    assert.equal(nobody.connects, 0);
  });

  it("refuses tenant A's operator an answer on B's connection, before Temporal, recorded as refused", async () => {
    const refused = await cliAs('olga', ['answer', 'connection-lender-b:app-9', '--prompt', 'City?', '--value', 'Montreal']);
    assert.equal(refused.code, 1);
    assert.match(refused.err, /Olga Operator may not answer on tenant lender-b: it takes the operator role on lender-b; nothing was done/);
    assert.equal(refused.connects, 0, 'Temporal was never asked');
    const entry = (await auditEntries()).find((each) => each.target === 'connection-lender-b:app-9');
    assert.deepEqual(
      [entry?.actor.subject, entry?.action, entry?.tenant, entry?.outcome, entry?.outcomeDetail],
      ['olga', 'answer', 'lender-b', 'refused', 'Forbidden'],
    );
    assert.ok(!JSON.stringify(await auditEntries()).includes('Montreal'), 'the answer is never recorded');

    const allowed = await cliAs('olga', ['answer', 'connection-lender-a:app-1', '--prompt', 'City?', '--value', 'Montreal']);
    assert.equal(allowed.connects, 1, 'her own tenant goes on to Temporal');
    assert.match(allowed.err, new RegExp(NO_TEMPORAL));
  });

  it('lets a viewer read and not answer; an operator not the fleet, and an unscoped list told where it may read', async () => {
    const answer = await cliAs('vic', ['answer', 'connection-lender-a:app-1', '--prompt', 'City?', '--value', 'x']);
    assert.match(answer.err, /Vic Viewer may not answer on tenant lender-a: it takes the operator role on lender-a/);
    assert.equal(answer.connects, 0);
    const show = await cliAs('vic', ['show', 'connection-lender-a:app-1']);
    assert.equal(show.connects, 1, 'a viewer may look');

    const budget = await cliAs('olga', ['budget', 'set', '--total', '5']);
    assert.match(budget.err, /Olga Operator may not administer on the whole fleet: it takes the admin role on every tenant \(\*\); nothing was done/);
    const list = await cliAs('olga', ['list']);
    assert.match(list.err, /may not read on the whole fleet: .*\(give --customer: you may read on lender-a\)/);
    assert.equal((await cliAs('olga', ['list', '--customer', 'lender-a'])).connects, 1);
    const forgetB = await cliAs('olga', ['tenant', 'forget', 'lender-b', '--yes']);
    assert.match(forgetB.err, /may not administer on tenant lender-b: it takes the admin role/);
    const refresh = await cliAs('olga', ['refresh', 'pause', '0b6a1f55-3c1e-4c8e-9a51-0f1b2c3d4e5f']);
    assert.match(refresh.err, /may not administer on tenant lender-a/, 'a login command is on AGGREGATOR_CUSTOMER_ID when no --customer names one');

    const admin = await cliAs('pia', ['budget', 'set', '--total', '5']);
    assert.equal(admin.connects, 1, 'the platform admin may');
    assert.equal((await cliAs('olga', ['whoami'])).code, 0, 'signing in itself is never gated');
  });

  it('checks nothing without a role map, as before', async () => {
    const unchecked = await cliAs('nobody', ['show', 'connection-lender-b:app-9'], { CLI_ROLE_MAP: undefined });
    assert.equal(unchecked.connects, 1);
  });
});

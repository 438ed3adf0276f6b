/**
 * The CLI signs its operator in (issue 44, item 1), against a real provider (oidc-provider,
 * scripts/lib/oidc-dev-provider.ts) with the CLI as a public native client: `login` prints the
 * address, a browser signs in there and comes back to the CLI's loopback address, the credentials
 * land in a 0600 file; `whoami` names the identity and asks the provider; the audit trail names it
 * for a command that acts; an identity the provider disables is refused before the command acts;
 * `logout` forgets it. A provider that is down, a wrong file mode and another provider's file are
 * refused by name.
 */
import assert from 'node:assert/strict';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCli } from '../../src/cli/run-cli.js';
import { FileAuditStore } from '../../src/audit/file-audit-store.js';
import { DevOidcProvider } from '../../scripts/lib/oidc-dev-provider.js';
import { HttpBrowser } from '../../scripts/lib/http-browser.js';

const PASSWORD = 'correct horse battery staple';

let provider: DevOidcProvider;
let dir: string;
let env: NodeJS.ProcessEnv;

/** Runs the CLI in-process with `env`; a line printed that starts with `  http` is the sign-in address, handed to `onAddress`. */
async function cli(args: string[], onAddress?: (url: string) => void): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, {
    out: (text) => {
      out.push(text);
      const address = /^\s+(http\S+)$/m.exec(text)?.[1];
      if (address && onAddress) onAddress(address);
    },
    err: (line) => err.push(line),
    readStdin: () => Promise.resolve(''),
    env,
    connect: () => Promise.reject(new Error('Temporal is not there in this test')),
    now: () => Date.now(),
    sleep: () => Promise.resolve(),
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** `login`, with a browser that signs in as `username` at the address it prints. */
async function loginAs(username: string, password = PASSWORD): Promise<{ code: number; out: string; err: string; page: string }> {
  let page = '';
  let browsing: Promise<void> = Promise.resolve();
  const result = await cli(['login'], (address) => {
    browsing = (async () => {
      const browser = new HttpBrowser();
      const form = await browser.open(address);
      const back = await browser.submit(form, { username, password });
      page = back.body;
    })();
  });
  await browsing;
  return { ...result, page };
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cli-sign-in-'));
  provider = await DevOidcProvider.start({
    identities: [
      { username: 'jo', password: PASSWORD, name: 'Jo Operator', groups: ['a-ops'] },
      { username: 'kim', password: PASSWORD, name: 'Kim Leaver', groups: ['a-ops'] },
    ],
    clients: [{ clientId: 'aggregation-cli', redirectUris: ['http://127.0.0.1/callback'] }],
  });
  env = { CLI_OIDC_ISSUER: provider.issuer, CLI_CREDENTIALS_FILE: join(dir, 'config', 'credentials.json'), AUDIT_STORE: `file:${join(dir, 'audit.jsonl')}` };
});

after(async () => {
  await provider?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the CLI signing in', () => {
  it('signs in through a browser and the loopback address, keeps the credentials 0600, and whoami names the identity', async () => {
    const signed = await loginAs('jo');
    assert.equal(signed.code, 0, signed.err);
    assert.match(signed.out, /Open this address in a browser on this machine to sign in:\n {2}http:\/\/127\.0\.0\.1:\d+\/auth\?/);
    assert.match(signed.out, /Signed in as Jo Operator \(jo\) until \d{4}-\d\d-\d\dT/);
    assert.match(signed.page, /Signed in/);
    const file = env.CLI_CREDENTIALS_FILE ?? assert.fail('the file');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(statSync(join(dir, 'config')).mode & 0o777, 0o700);
    const kept = JSON.parse(readFileSync(file, 'utf8')) as { subject: string; groups: string[]; issuer: string };
    assert.deepEqual([kept.subject, kept.groups, kept.issuer], ['jo', ['a-ops'], `${provider.issuer}/`]);
    const who = await cli(['whoami']);
    assert.equal(who.code, 0, who.err);
    assert.match(who.out, /^Jo Operator \(jo\) at http:\/\/127\.0\.0\.1:\d+\/; groups a-ops; until /);
    assert.match(who.out, /the provider still accepts it/);
  });

  it('records the signed-in identity for a command that acts, and refuses it once the provider disables the identity', async () => {
    assert.equal((await loginAs('kim')).code, 0);
    const acted = await cli(['answer', 'connection-lender-a:app-1', '--prompt', 'City?', '--value', 'x']);
    assert.equal(acted.code, 1, 'no Temporal here: the command fails after it was recorded');
    const entries = await new FileAuditStore(join(dir, 'audit.jsonl')).query({ limit: 100 });
    const answer = entries.find((entry) => entry.action === 'answer');
    assert.deepEqual([answer?.actor.subject, answer?.actor.name, answer?.actor.via, answer?.tenant], ['kim', 'Kim Leaver', 'oidc-cli', 'lender-a']);

    provider.disable('kim');
    const refused = await cli(['answer', 'connection-lender-a:app-1', '--prompt', 'City?', '--value', 'x']);
    assert.equal(refused.code, 1);
    assert.match(refused.err, /the provider no longer accepts the sign-in of Kim Leaver .*: nothing was done/);
    const who = await cli(['whoami']);
    assert.equal(who.code, 1);
    assert.match(who.err, /the provider no longer accepts this sign-in/);
    assert.equal(
      (await new FileAuditStore(join(dir, 'audit.jsonl')).query({ limit: 100 })).filter((entry) => entry.action === 'answer').length,
      1,
      'the refused command left no attempt',
    );
  });

  it('refuses credentials others may read, or of another provider, and forgets them at logout', async () => {
    assert.equal((await loginAs('jo')).code, 0);
    const file = env.CLI_CREDENTIALS_FILE ?? assert.fail('the file');
    chmodSync(file, 0o644);
    const open = await cli(['whoami']);
    assert.equal(open.code, 1);
    assert.match(open.err, /may be read or written by others \(mode 644\): sign in again/);
    chmodSync(file, 0o600);
    const kept = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    writeFileSync(file, JSON.stringify({ ...kept, issuer: 'https://id.elsewhere.example/' }), { mode: 0o600 });
    const elsewhere = await cli(['whoami']);
    assert.match(elsewhere.err, /signed in at https:\/\/id\.elsewhere\.example\/ as client aggregation-cli, not at CLI_OIDC_ISSUER/);
    const out = await cli(['logout']);
    assert.match(out.out, /^signed out: .*credentials\.json removed$/);
    assert.match((await cli(['whoami'])).err, /^not signed in \(login\)$/);
    assert.equal((await cli(['logout'])).out, 'was not signed in');
  });

  it('fails login by name when the provider is down, or not configured', async () => {
    const unset = await runCli(['login'], {
      out: () => undefined,
      err: () => undefined,
      readStdin: () => Promise.resolve(''),
      env: { HOME: dir },
      connect: () => Promise.reject(new Error('no')),
      now: Date.now,
      sleep: () => Promise.resolve(),
    });
    assert.equal(unset, 2);
    await provider.stop();
    const down = await cli(['login']);
    assert.equal(down.code, 1);
    assert.match(down.err, /the identity provider at http:\/\/127\.0\.0\.1:\d+\/ did not answer/);
  });
});

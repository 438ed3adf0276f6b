/**
 * The audit trail of the CLI's commands that act (answer, start, forget, schedule, book, budget and
 * deployment changes): the dispatcher records each invocation's attempt before the command runs, under
 * the CLI's identity, and its outcome after. A trail that cannot be written stops the command before
 * it acts. Only the command, its tenant and its first argument are recorded: never a flag's value
 * (an answer, a password), apart from `--customer`. A command the operator's roles refuse
 * (command-access.ts) is recorded as refused.
 */
import { hostname, userInfo } from 'node:os';
import type { AuditActor, AuditAction } from '../audit/audit-entry.js';
import { AuditTrail, openAuditStore, type AuditHandle } from '../audit/audit-trail.js';
import { loadAuditStoreLocation } from '../settings/audit.js';
import { loadCliSignInConfig } from '../settings/cli-sign-in.js';
import { loadClientConfig } from '../settings/client.js';
import { cliOidc } from './commands/login.js';
import { readCredentials } from './credentials.js';

/** The provider no longer accepts the CLI's signed-in identity: its commands that act are refused. */
export class CliSignInRevokedError extends Error {
  override readonly name = 'CliSignInRevokedError';
  constructor(readonly who: string) {
    super(
      `the provider no longer accepts the sign-in of ${who} (the identity disabled or the grant revoked): nothing was done; sign in again (login) if you still may`,
    );
  }
}

/** The CLI's identity: the trail's actor, and the signed-in operator's groups (undefined when nobody is signed in). */
export interface CliIdentity {
  readonly actor: AuditActor;
  readonly groups: readonly string[] | undefined;
}

/**
 * The CLI as the trail names it: the operator signed in with `login` (asked about at the provider:
 * one it no longer accepts is refused; one that does not answer is taken until it expires), else its
 * Temporal client identity if set, else the OS user on this host.
 */
export async function cliIdentity(env: NodeJS.ProcessEnv | undefined): Promise<CliIdentity> {
  const signIn = loadCliSignInConfig(env);
  if (signIn.issuer !== undefined && signIn.credentialsFile !== undefined) {
    const state = await readCredentials(signIn.credentialsFile, { issuer: signIn.issuer.href, clientId: signIn.clientId });
    if (state.signedIn) {
      const { subject, name, accessToken, groups } = state.credentials;
      if ((await cliOidc({ ...signIn, issuer: signIn.issuer }).stillSignedIn(accessToken, subject)) === 'revoked') throw new CliSignInRevokedError(name);
      return { actor: { subject, name, via: 'oidc-cli' }, groups };
    }
  }
  const user = userInfo().username;
  const identity = loadClientConfig(env).identity;
  return { actor: { subject: identity ?? `${user}@${hostname()}`, name: identity ?? user, via: 'cli' }, groups: undefined };
}

/** What the trail records of one invocation: who, the command as typed, its tenant and first argument (never a flag's value). */
export interface CommandRecord {
  readonly actor: AuditActor;
  readonly action: AuditAction;
  readonly command: string;
  readonly args: readonly string[];
  readonly tenant: string | undefined;
}

function beginOf({ actor, action, command, args, tenant }: CommandRecord) {
  const first = args[0] !== undefined && !args[0].startsWith('-') ? args[0] : undefined;
  return { actor, action, tenant, target: first, detail: `cli ${command}` };
}

/** Records the attempt of a command that acts; throws AuditUnavailableError when it cannot. */
export async function beginCommandAudit(record: CommandRecord, env: NodeJS.ProcessEnv | undefined): Promise<{ handle: AuditHandle; trail: AuditTrail }> {
  const trail = new AuditTrail(openAuditStore(loadAuditStoreLocation(env)));
  try {
    const handle = await trail.begin(beginOf(record));
    return { handle, trail };
  } catch (error) {
    await trail.close().catch(() => undefined);
    throw error;
  }
}

/** Records a command the operator's roles refused (`Forbidden`); throws AuditUnavailableError when it cannot. */
export async function recordCommandRefusal(record: CommandRecord, env: NodeJS.ProcessEnv | undefined): Promise<void> {
  const trail = new AuditTrail(openAuditStore(loadAuditStoreLocation(env)));
  try {
    await trail.record(beginOf(record), 'refused', 'Forbidden');
  } finally {
    await trail.close().catch(() => undefined);
  }
}

/**
 * The audit trail of the CLI's commands that act (answer, start, forget, schedule, book, budget and
 * deployment changes): the dispatcher records each invocation's attempt before the command runs, under
 * the CLI's identity, and its outcome after. A trail that cannot be written stops the command before
 * it acts. Only the command, its tenant and its first argument are recorded: never a flag's value
 * (an answer, a password), apart from `--customer`.
 */
import { hostname, userInfo } from 'node:os';
import type { AuditActor, AuditAction } from '../../audit/audit-entry.js';
import { AuditTrail, openAuditStore, type AuditHandle } from '../../audit/audit-trail.js';
import { tenantOfWorkflowId } from '../../contract/workflow-tenant.js';
import { loadAuditStoreLocation } from '../../settings/audit.js';
import { loadCliSignInConfig } from '../../settings/cli-sign-in.js';
import { loadClientConfig } from '../../settings/client.js';
import { cliOidc } from './commands/login.js';
import { readCredentials } from './credentials.js';

/** What a command that acts records: its action, and where its tenant is when no --customer names it. */
export interface CommandAudit {
  readonly action: AuditAction;
  /** The first argument is the tenant itself (`tenant forget <customerId>`). */
  readonly tenantIsFirstArgument?: boolean;
}

/** The provider no longer accepts the CLI's signed-in identity: its commands that act are refused. */
export class CliSignInRevokedError extends Error {
  override readonly name = 'CliSignInRevokedError';
  constructor(readonly who: string) {
    super(`the provider no longer accepts the sign-in of ${who} (the identity disabled or the grant revoked): nothing was done; sign in again (login) if you still may`);
  }
}

/**
 * The CLI as the trail names it: the operator signed in with `login` (asked about at the provider:
 * one it no longer accepts is refused; one that does not answer is taken until it expires), else its
 * Temporal client identity if set, else the OS user on this host.
 */
export async function cliActor(env: NodeJS.ProcessEnv | undefined): Promise<AuditActor> {
  const signIn = loadCliSignInConfig(env);
  if (signIn.issuer !== undefined && signIn.credentialsFile !== undefined) {
    const state = await readCredentials(signIn.credentialsFile, { issuer: signIn.issuer.href, clientId: signIn.clientId });
    if (state.signedIn) {
      const { subject, name, accessToken } = state.credentials;
      if ((await cliOidc({ ...signIn, issuer: signIn.issuer }).stillSignedIn(accessToken, subject)) === 'revoked') throw new CliSignInRevokedError(name);
      return { subject, name, via: 'oidc-cli' };
    }
  }
  const user = userInfo().username;
  const identity = loadClientConfig(env).identity;
  return { subject: identity ?? `${user}@${hostname()}`, name: identity ?? user, via: 'cli' };
}

/** The value of `--customer` (either form), if given. */
function customerFlag(args: readonly string[]): string | undefined {
  for (const [index, arg] of args.entries()) {
    if (arg === '--customer') return args[index + 1];
    if (arg.startsWith('--customer=')) return arg.slice('--customer='.length);
  }
  return undefined;
}

/** Records the attempt of `command` (as typed) with `args`; throws AuditUnavailableError when it cannot. */
export async function beginCommandAudit(audit: CommandAudit, command: string, args: readonly string[], env: NodeJS.ProcessEnv | undefined): Promise<{ handle: AuditHandle; trail: AuditTrail }> {
  const first = args[0] !== undefined && !args[0].startsWith('-') ? args[0] : undefined;
  const tenant = customerFlag(args) ?? (audit.tenantIsFirstArgument ? first : first && tenantOfWorkflowId(first));
  const trail = new AuditTrail(openAuditStore(loadAuditStoreLocation(env)));
  try {
    const handle = await trail.begin({ actor: await cliActor(env), action: audit.action, tenant, target: first, detail: `cli ${command}` });
    return { handle, trail };
  } catch (error) {
    await trail.close().catch(() => undefined);
    throw error;
  }
}

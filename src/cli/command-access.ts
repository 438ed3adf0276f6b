/**
 * The CLI's commands checked against the signed-in operator's roles, as the console's routes are:
 * with CLI_ROLE_MAP set, every command but signing in itself needs a signed-in operator (`login`)
 * whose groups grant the command's permission on its tenant; a refusal names the role it takes and
 * is recorded in the audit trail, and nothing is done.
 *
 * This is least privilege for the people at the keyboard and a record of what they tried, not the
 * boundary: the CLI reaches Temporal with its host's credentials, so whoever holds those can act
 * without the CLI. Temporal's authorizer (a token per process) and the sealed payloads per tenant are
 * the boundary (docs/threat-model.md, "Operators").
 */
import { tenantOfWorkflowId } from '../contract/workflow-tenant.js';
import { LEAST_ROLE, may, rolesOfGroups, tenantsWhere, ALL_TENANTS, type Permission, type Principal, type RoleGrant } from '../identity/roles.js';

/** What a command does, as the role map grants it, and where its tenant is. */
export interface CommandAccess {
  /** `none`: signing in itself (login, whoami, logout), which no role gates. */
  readonly permission: Permission | 'none';
  /**
   * Where the tenant is when neither `--customer` nor a workflow id as the first argument names it:
   * the first argument itself (`tenant forget <customerId>`), or AGGREGATOR_CUSTOMER_ID (commands on a
   * tenant's logins and books). Unset: nowhere, so the command is on the whole fleet and needs the
   * role on every tenant (`*`).
   */
  readonly tenant?: 'first-argument' | 'default-customer';
}

/** The signed-in operator's roles do not allow the command here. */
export class CommandForbiddenError extends Error {
  override readonly name = 'CommandForbiddenError';
  constructor(
    readonly who: string,
    readonly permission: Permission,
    readonly tenant: string | undefined,
    hint: string,
  ) {
    super(
      `${who} may not ${permission} ${tenant === undefined ? 'on the whole fleet' : `on tenant ${tenant}`}: it takes the ${LEAST_ROLE[permission]} role on ${tenant ?? `every tenant (${ALL_TENANTS})`}${hint}; nothing was done`,
    );
  }
}

/** CLI_ROLE_MAP is set and nobody is signed in: no command but signing in may run. */
export class CliSignInRequiredError extends Error {
  override readonly name = 'CliSignInRequiredError';
  constructor(why: string) {
    super(`commands are checked against CLI_ROLE_MAP, so they need a signed-in operator (login): ${why}`);
  }
}

/** The value of `--customer` (either form), if given. */
function customerFlag(args: readonly string[]): string | undefined {
  for (const [index, arg] of args.entries()) {
    if (arg === '--customer') return args[index + 1];
    if (arg.startsWith('--customer=')) return arg.slice('--customer='.length);
  }
  return undefined;
}

/** The tenant the command acts on, read from its arguments as `access` says; undefined: the whole fleet. */
export function commandTenant(access: CommandAccess, args: readonly string[], defaultCustomerId: () => string | undefined): string | undefined {
  const first = args[0] !== undefined && !args[0].startsWith('-') ? args[0] : undefined;
  const named = customerFlag(args);
  if (named !== undefined) return named;
  if (access.tenant === 'first-argument') return first;
  const ofWorkflow = first === undefined ? undefined : tenantOfWorkflowId(first);
  if (ofWorkflow !== undefined) return ofWorkflow;
  return access.tenant === 'default-customer' ? defaultCustomerId() : undefined;
}

/** The signed-in operator as the role map sees them. */
export function cliPrincipal(
  identity: { readonly subject: string; readonly name: string },
  groups: readonly string[],
  roleMap: readonly RoleGrant[],
): Principal {
  return { subject: identity.subject, name: identity.name, via: 'oidc', roles: rolesOfGroups(groups, roleMap) };
}

/** Throws CommandForbiddenError when `principal` may not do `permission` on `tenant`. */
export function checkCommand(principal: Principal, permission: Permission, tenant: string | undefined): void {
  if (may(principal, permission, tenant)) return;
  const where = tenantsWhere(principal, permission);
  const hint = tenant === undefined && Array.isArray(where) && where.length > 0 ? ` (give --customer: you may ${permission} on ${where.join(', ')})` : '';
  throw new CommandForbiddenError(principal.name, permission, tenant, hint);
}

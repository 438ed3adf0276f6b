/**
 * Who may do what, per tenant. An operator's identity carries groups (an OpenID Connect claim); the
 * role map (CONSOLE_ROLE_MAP) turns each group into a role on one tenant or on all (`*`):
 *   viewer    connections' status and challenges' prompts, books' progress, schedules: read
 *   operator  a viewer who answers challenges and cancels connections
 *   analyst   a viewer who reads decoded payloads (the codec endpoint)
 *   admin     all of it, and books, budget, forgetting and schedules' changes
 * Least privilege by default: an identity none of whose groups is mapped may do nothing.
 */
import { ID_SEGMENT_PATTERN } from '../contract/ids.js';

export const ROLES = ['viewer', 'operator', 'analyst', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export const PERMISSIONS = ['read', 'answer', 'cancel', 'decode', 'administer'] as const;
export type Permission = (typeof PERMISSIONS)[number];

const GRANTED: Readonly<Record<Role, readonly Permission[]>> = {
  viewer: ['read'],
  operator: ['read', 'answer', 'cancel'],
  analyst: ['read', 'decode'],
  admin: PERMISSIONS,
};

/** Which role a permission needs at the least, for a refusal that says what to ask for. */
export const LEAST_ROLE: Readonly<Record<Permission, Role>> = {
  read: 'viewer',
  answer: 'operator',
  cancel: 'operator',
  decode: 'analyst',
  administer: 'admin',
};

/** Every tenant: a role granted on `*`. */
export const ALL_TENANTS = '*';

/** Tenant (or `*`) → the roles held on it. */
export type TenantRoles = ReadonlyMap<string, ReadonlySet<Role>>;

/** Who is calling: a person signed in, or one of the console's shared credentials. */
export interface Principal {
  /** The identity's subject (`sub`), or the shared credential's name. */
  readonly subject: string;
  /** What to call them in the audit and on the page (name, e-mail, else the subject). */
  readonly name: string;
  /** `oidc`: a console session; `oidc-bearer`: an access token of the provider on the API; the others: shared credentials. */
  readonly via: 'oidc' | 'oidc-bearer' | 'console-token' | 'codec-token';
  readonly roles: TenantRoles;
}

/** One line of the role map: members of `group` hold `role` on `tenant` (or every tenant). */
export interface RoleGrant {
  readonly group: string;
  readonly role: Role;
  readonly tenant: string;
}

export class RoleMapError extends Error {
  override readonly name = 'RoleMapError';
}

const GROUP_PATTERN = /^[^\s,=]{1,256}$/;

/**
 * `group=role@tenant,group=role@*`: e.g. `lender-a-ops=operator@lender-a,platform=admin@*`. A group
 * may appear on several entries (roles on several tenants). Whitespace around entries is ignored.
 */
export function parseRoleMap(text: string): RoleGrant[] {
  const grants: RoleGrant[] = [];
  for (const [index, raw] of text.split(',').entries()) {
    const entry = raw.trim();
    if (entry === '') continue;
    const where = `entry ${index + 1} ${JSON.stringify(entry.slice(0, 80))}`;
    const match = /^([^=]+)=([a-z]+)@(.+)$/.exec(entry);
    if (!match) throw new RoleMapError(`${where} must be <group>=<role>@<customerId or *>`);
    const [, group = '', role = '', tenant = ''] = match;
    if (!GROUP_PATTERN.test(group.trim())) throw new RoleMapError(`${where}: the group must be 1 to 256 characters without spaces, "," or "="`);
    if (!(ROLES as readonly string[]).includes(role)) throw new RoleMapError(`${where}: the role must be one of ${ROLES.join(', ')}`);
    if (tenant !== ALL_TENANTS && !ID_SEGMENT_PATTERN.test(tenant)) throw new RoleMapError(`${where}: the tenant must be a customer id or *`);
    grants.push({ group: group.trim(), role: role as Role, tenant });
  }
  return grants;
}

/** The roles an identity's groups give it under the map; none for groups the map does not name. */
export function rolesOfGroups(groups: readonly string[], grants: readonly RoleGrant[]): TenantRoles {
  const held = new Set(groups);
  const roles = new Map<string, Set<Role>>();
  for (const grant of grants) {
    if (!held.has(grant.group)) continue;
    const onTenant = roles.get(grant.tenant) ?? new Set<Role>();
    onTenant.add(grant.role);
    roles.set(grant.tenant, onTenant);
  }
  return roles;
}

/** Whether `principal` may do `permission` on `tenant`'s work (undefined: work of no tenant, which only a grant on every tenant covers). */
export function may(principal: Principal, permission: Permission, tenant: string | undefined): boolean {
  const grants = (roles: ReadonlySet<Role> | undefined) => [...(roles ?? [])].some((role) => GRANTED[role].includes(permission));
  return grants(principal.roles.get(ALL_TENANTS)) || (tenant !== undefined && grants(principal.roles.get(tenant)));
}

/** The tenants `principal` may do `permission` on: every one, or those listed (perhaps none). */
export function tenantsWhere(principal: Principal, permission: Permission): typeof ALL_TENANTS | string[] {
  if (may(principal, permission, undefined)) return ALL_TENANTS;
  return [...principal.roles.keys()].filter((tenant) => tenant !== ALL_TENANTS && may(principal, permission, tenant)).sort();
}

/** The roles as text for a page or a log line: "operator@lender-a, viewer@*". */
export function describeRoles(roles: TenantRoles): string {
  const parts = [...roles].flatMap(([tenant, held]) => [...held].map((role) => `${role}@${tenant}`)).sort();
  return parts.length === 0 ? 'no roles' : parts.join(', ');
}

/** The shared console token's holder (the dev stack's): every permission on every tenant. */
export const CONSOLE_TOKEN_PRINCIPAL: Principal = Object.freeze({
  subject: 'console-token',
  name: 'the console token',
  via: 'console-token',
  roles: new Map([[ALL_TENANTS, new Set<Role>(['admin'])]]),
});

/** The codec token's holder: decodes, every tenant, and nothing else. */
export const CODEC_TOKEN_PRINCIPAL: Principal = Object.freeze({
  subject: 'codec-token',
  name: 'the codec token',
  via: 'codec-token',
  roles: new Map([[ALL_TENANTS, new Set<Role>(['analyst'])]]),
});

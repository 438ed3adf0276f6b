/**
 * Roles per tenant: the role map's text, what each role may do, on which tenant, and what a
 * refusal can say; and the sealed cookies that carry a session (tampered, of another purpose or
 * console, expired beyond the clock tolerance: each refused by name).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  ALL_TENANTS,
  CONSOLE_TOKEN_PRINCIPAL,
  describeRoles,
  may,
  parseRoleMap,
  RoleMapError,
  rolesOfGroups,
  tenantsWhere,
  type Principal,
} from '../../src/identity/roles.js';
import { SealedCookieExpiredError, SealedCookieInvalidError, SealedCookies, SEAL_CLOCK_TOLERANCE_S } from '../../src/identity/sealed-cookie.js';

const MAP = parseRoleMap(' a-ops=operator@lender-a , a-analysts=analyst@lender-a, b-view=viewer@lender-b,platform=admin@*,');
const principal = (...groups: string[]): Principal => ({ subject: 's', name: 'n', via: 'oidc', roles: rolesOfGroups(groups, MAP) });

describe('roles per tenant', () => {
  it('reads the role map, and refuses a bad entry by its place', () => {
    assert.equal(MAP.length, 4);
    assert.deepEqual(MAP[3], { group: 'platform', role: 'admin', tenant: ALL_TENANTS });
    assert.throws(
      () => parseRoleMap('x=operator@a,y=root@b'),
      (error: unknown) => error instanceof RoleMapError && /entry 2 "y=root@b": the role must be one of/.test(error.message),
    );
    assert.throws(() => parseRoleMap('x=operator@'), /must be <group>=<role>@<customerId or \*>/);
    assert.throws(() => parseRoleMap('x y=operator@a'), /the group must be 1 to 256 characters without spaces/);
  });

  it('gives each role its permissions on its tenant only', () => {
    const operator = principal('a-ops');
    assert.ok(may(operator, 'answer', 'lender-a') && may(operator, 'cancel', 'lender-a') && may(operator, 'read', 'lender-a'));
    assert.ok(!may(operator, 'decode', 'lender-a') && !may(operator, 'administer', 'lender-a'));
    assert.ok(!may(operator, 'read', 'lender-b') && !may(operator, 'read', undefined), 'nor another tenant, nor work of no tenant');
    const analyst = principal('a-analysts');
    assert.ok(may(analyst, 'decode', 'lender-a') && !may(analyst, 'answer', 'lender-a'));
    const viewer = principal('b-view');
    assert.ok(may(viewer, 'read', 'lender-b') && !may(viewer, 'answer', 'lender-b'));
    const admin = principal('platform');
    for (const permission of ['read', 'answer', 'cancel', 'decode', 'administer'] as const)
      assert.ok(may(admin, permission, 'anyone') && may(admin, permission, undefined), permission);
    assert.ok(may(CONSOLE_TOKEN_PRINCIPAL, 'administer', undefined));
  });

  it('lists the tenants a permission covers, and nothing for groups the map does not name', () => {
    assert.deepEqual(tenantsWhere(principal('a-ops', 'b-view'), 'read'), ['lender-a', 'lender-b']);
    assert.deepEqual(tenantsWhere(principal('a-ops', 'b-view'), 'answer'), ['lender-a']);
    assert.equal(tenantsWhere(principal('platform'), 'read'), ALL_TENANTS);
    assert.deepEqual(tenantsWhere(principal('unknown'), 'read'), []);
    assert.equal(describeRoles(principal('a-ops', 'a-analysts').roles), 'analyst@lender-a, operator@lender-a');
    assert.equal(describeRoles(principal().roles), 'no roles');
  });
});

describe('sealed cookies', () => {
  const key = randomBytes(32);
  const cookies = new SealedCookies(key);

  it('opens what it sealed, for its purpose only', async () => {
    const sealed = await cookies.seal('session', { sub: 'alice' }, Date.now() + 60_000);
    assert.equal((await cookies.open('session', sealed)).sub, 'alice');
    await assert.rejects(cookies.open('sign-in', sealed), SealedCookieInvalidError);
    await assert.rejects(
      new SealedCookies(randomBytes(32)).open('session', sealed),
      (error: unknown) => error instanceof SealedCookieInvalidError && /not one this console sealed/.test(error.message),
    );
    const changed = `${sealed.slice(0, 40)}${sealed[40] === 'A' ? 'B' : 'A'}${sealed.slice(41)}`;
    await assert.rejects(cookies.open('session', changed), SealedCookieInvalidError);
    await assert.rejects(cookies.open('session', 'not-a-jwe'), SealedCookieInvalidError);
  });

  it('allows the clock tolerance past expiry and no more', async () => {
    const within = await cookies.seal('session', { sub: 'alice' }, Date.now() - (SEAL_CLOCK_TOLERANCE_S - 10) * 1000);
    assert.equal((await cookies.open('session', within)).sub, 'alice');
    const beyond = await cookies.seal('session', { sub: 'alice' }, Date.now() - (SEAL_CLOCK_TOLERANCE_S + 10) * 1000);
    await assert.rejects(
      cookies.open('session', beyond),
      (error: unknown) => error instanceof SealedCookieExpiredError && /the session has expired: sign in again/.test(error.message),
    );
  });
});

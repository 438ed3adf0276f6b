/**
 * How the operator CLI signs in (`npm run cli -- login`): the provider, the CLI's public client id
 * there, where its credentials are kept, and the role map its commands are checked against.
 * loadCliSignInConfig → { issuer?, clientId, credentialsFile, groupsClaim, timeoutMs, allowHttp, roleMap? }.
 */
import { isAbsolute, join } from 'node:path';
import { z } from 'zod';
import { CountAtLeast, NonEmpty, doc, group } from './document.js';
import { isLoopbackHost } from './kms.js';
import { parseEnv } from './load.js';
import { parseRoleMap, RoleMapError } from '../identity/roles.js';

export const CliSignInVars = group(
  z.object({
    CLI_OIDC_ISSUER: doc(
      z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).optional(),
      "The OpenID Connect provider operators sign the CLI in with (`login`): https, or http to this machine only. Unset: the CLI does not sign in, and names its host's user in the audit trail.",
      { defaultText: 'unset' },
    ),
    CLI_OIDC_CLIENT_ID: doc(
      NonEmpty.default('aggregation-cli'),
      "The CLI's client id at the provider: a public native client (no secret: PKCE), redirect URI http://127.0.0.1/callback with any port (RFC 8252).",
    ),
    CLI_OIDC_GROUPS_CLAIM: doc(NonEmpty.default('groups'), "The claim that lists the identity's groups."),
    CLI_OIDC_TIMEOUT_MS: doc(CountAtLeast(100).default(5_000), 'One call to the provider may take this long.'),
    CLI_ROLE_MAP: doc(
      z.string().trim().optional(),
      "The CLI's commands checked against the signed-in operator's roles, in CONSOLE_ROLE_MAP's form (<group>=<role>@<customerId or *>, comma-separated; usually the same map): every command but login, whoami and logout then needs a signed-in operator whose groups grant it on the command's tenant, and a refusal is recorded in the audit trail. Least privilege for the people at the keyboard, not the boundary: the CLI reaches Temporal with its host's credentials (docs/threat-model.md).",
      { defaultText: 'unset: commands are not checked by role' },
    ),
    CLI_CREDENTIALS_FILE: doc(
      z.string().trim().min(1).refine(isAbsolute, { message: 'must be an absolute path' }).optional(),
      'Where `login` keeps the signed-in identity and its tokens (mode 0600, its directory 0700), as `gh` and `gcloud` do.',
      { defaultText: '$XDG_CONFIG_HOME/aggregation-connections/credentials.json, else ~/.config/aggregation-connections/credentials.json' },
    ),
  }),
  'CLI sign-in',
  'The operator CLI signs its operator in through OpenID Connect (`login`, a browser on this machine and a loopback redirect); the audit trail then names that identity for its commands.',
);

/** The user's config directory, as the XDG rule (and Temporal's CLI) has it: HOME and XDG_CONFIG_HOME, read as they are. */
function userConfigDir(env: Readonly<Record<string, unknown>>): string | undefined {
  const xdg = typeof env.XDG_CONFIG_HOME === 'string' && isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : undefined;
  const home = typeof env.HOME === 'string' && env.HOME !== '' ? env.HOME : undefined;
  return xdg ?? (home && join(home, '.config'));
}

const CliSignInEnv = z
  .looseObject({ ...CliSignInVars.shape })
  .superRefine((env, ctx) => {
    if (env.CLI_ROLE_MAP !== undefined) {
      try {
        parseRoleMap(env.CLI_ROLE_MAP);
      } catch (error) {
        if (!(error instanceof RoleMapError)) throw error;
        ctx.addIssue({ code: 'custom', path: ['CLI_ROLE_MAP'], message: error.message });
      }
      if (env.CLI_OIDC_ISSUER === undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['CLI_ROLE_MAP'],
          message: "is set but CLI_OIDC_ISSUER is not: roles come from a signed-in identity's groups, so the CLI must sign in at a provider",
        });
    }
    if (env.CLI_OIDC_ISSUER === undefined) return;
    const issuer = new URL(env.CLI_OIDC_ISSUER);
    if (issuer.protocol === 'http:' && !isLoopbackHost(issuer.hostname)) {
      ctx.addIssue({
        code: 'custom',
        path: ['CLI_OIDC_ISSUER'],
        message: `is http:// to ${issuer.hostname}, not on this machine: the tokens would cross the network in clear; use https://`,
      });
    }
  })
  .transform((env) =>
    Object.freeze({
      issuer: env.CLI_OIDC_ISSUER === undefined ? undefined : new URL(env.CLI_OIDC_ISSUER),
      clientId: env.CLI_OIDC_CLIENT_ID,
      groupsClaim: env.CLI_OIDC_GROUPS_CLAIM,
      timeoutMs: env.CLI_OIDC_TIMEOUT_MS,
      /** Undefined when neither it, HOME nor XDG_CONFIG_HOME says where: `login` then asks for CLI_CREDENTIALS_FILE. */
      credentialsFile: env.CLI_CREDENTIALS_FILE ?? (userConfigDir(env) && join(userConfigDir(env) ?? '', 'aggregation-connections', 'credentials.json')),
      allowHttp: env.CLI_OIDC_ISSUER !== undefined && isLoopbackHost(new URL(env.CLI_OIDC_ISSUER).hostname),
      /** Undefined: commands are not checked by role. */
      roleMap: env.CLI_ROLE_MAP === undefined ? undefined : Object.freeze(parseRoleMap(env.CLI_ROLE_MAP)),
    }),
  );

export type CliSignInConfig = z.output<typeof CliSignInEnv>;

export function loadCliSignInConfig(env?: NodeJS.ProcessEnv): CliSignInConfig {
  return parseEnv(CliSignInEnv, env);
}

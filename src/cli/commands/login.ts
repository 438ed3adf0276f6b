/**
 * `login`, `whoami`, `logout`: the CLI signs its operator in through OpenID Connect as `gh` and
 * `gcloud` do on a workstation: authorization code with PKCE as a public native client, the browser
 * sent back to a loopback address the CLI listens on for that one answer (RFC 8252), the identity and
 * its access token kept in a 0600 file (credentials.ts). The audit trail then names that identity
 * for the CLI's commands that act (cli-audit.ts).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OidcSignIn, type OidcSettings } from '../../identity/oidc-sign-in.js';
import { loadCliSignInConfig, type CliSignInConfig } from '../../settings/cli-sign-in.js';
import { noPositionals, parseFlags, UsageError } from '../args.js';
import type { CliIo, Command } from '../command.js';
import { readCredentials, removeCredentials, writeCredentials } from '../credentials.js';
import { EXIT_FAILED, EXIT_OK } from '../report.js';

/** How long `login` waits for the browser to come back. */
const LOGIN_WAIT_MS = 5 * 60_000;
/** A sign-in lasts at most this long, and never past its access token. */
const SIGN_IN_MAX_MS = 12 * 3_600_000;

/** The settings `login` and `whoami` need: a provider, and where the credentials go. */
function signInSettings(io: CliIo): CliSignInConfig & { issuer: URL; credentialsFile: string } {
  const config = loadCliSignInConfig(io.env);
  if (config.issuer === undefined) throw new UsageError('CLI_OIDC_ISSUER is not set: the CLI signs in through the OpenID Connect provider it names');
  if (config.credentialsFile === undefined) throw new UsageError('CLI_CREDENTIALS_FILE is not set, nor HOME or XDG_CONFIG_HOME: say where the credentials go');
  return { ...config, issuer: config.issuer, credentialsFile: config.credentialsFile };
}

/** The provider as the CLI's public client, sending the browser back to `redirectUri`. */
export function cliOidc(config: CliSignInConfig & { issuer: URL }, redirectUri = 'http://127.0.0.1/callback'): OidcSignIn {
  const settings: OidcSettings = {
    issuer: config.issuer,
    clientId: config.clientId,
    redirectUri,
    groupsClaim: config.groupsClaim,
    roleMap: [],
    timeoutMs: config.timeoutMs,
    recheckMs: 0,
    sessionMaxMs: SIGN_IN_MAX_MS,
    allowHttp: config.allowHttp,
  };
  return new OidcSignIn(settings);
}

const PAGE = (title: string, text: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1><p>${text.replace(/[<>&]/g, (c) => `&#${c.charCodeAt(0)};`)}</p></body></html>`;

export const login: Command = {
  access: { permission: 'none' },
  summary: 'sign in through the OpenID Connect provider (a browser on this machine)',
  usage: (program) => `Usage: ${program} login

Prints an address to open in a browser on this machine, where you sign in at the provider
(CLI_OIDC_ISSUER); the browser comes back to an address the CLI listens on (127.0.0.1, any port)
for ${LOGIN_WAIT_MS / 60_000} minutes. Your identity and its access token are kept in
CLI_CREDENTIALS_FILE (mode 0600) until the token expires; the audit trail then names you for the
commands that act. "${program} whoami" shows who is signed in, "${program} logout" forgets it.`,

  async run(args, { io }) {
    noPositionals(parseFlags({ args: [...args], options: {}, allowPositionals: true }).positionals);
    const config = signInSettings(io);
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    try {
      const redirectUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
      const oidc = cliOidc(config, redirectUri);
      const { url, pending } = await oidc.begin('/');
      let timer: NodeJS.Timeout | undefined;
      const answered = new Promise<URL>((resolve, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer from the browser within ${LOGIN_WAIT_MS / 60_000} minutes: run login again`)), LOGIN_WAIT_MS);
        server.on('request', (request, response) => {
          const at = new URL(request.url ?? '/', redirectUri);
          if (at.pathname !== '/callback') {
            response.writeHead(404).end();
            return;
          }
          response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
          response.end(PAGE('Signed in', 'You may close this tab and go back to the terminal.'));
          resolve(at);
        });
      });
      io.out(`Open this address in a browser on this machine to sign in:\n  ${url.href}`);
      const callback = await answered.finally(() => clearTimeout(timer));
      const signedIn = await oidc.complete(callback, pending);
      const { subject, name } = signedIn.principal;
      const expiresAt = new Date(signedIn.expiresAt).toISOString();
      await writeCredentials(config.credentialsFile, {
        issuer: config.issuer.href,
        clientId: config.clientId,
        subject,
        name,
        groups: [...signedIn.groups],
        accessToken: signedIn.accessToken,
        signedInAt: new Date().toISOString(),
        expiresAt,
      });
      io.out(`Signed in as ${name} (${subject}) until ${expiresAt}; credentials in ${config.credentialsFile}`);
      return EXIT_OK;
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  },
};

export const whoami: Command = {
  access: { permission: 'none' },
  summary: 'who the CLI is signed in as, and whether the provider still accepts it',
  usage: (program) => `Usage: ${program} whoami

Prints the identity "${program} login" signed in, its groups and until when, and asks the provider
whether it still accepts it. Exit 1 when not signed in, expired or no longer accepted.`,

  async run(args, { io }) {
    noPositionals(parseFlags({ args: [...args], options: {}, allowPositionals: true }).positionals);
    const config = signInSettings(io);
    const state = await readCredentials(config.credentialsFile, { issuer: config.issuer.href, clientId: config.clientId });
    if (!state.signedIn) {
      io.err(state.why);
      return EXIT_FAILED;
    }
    const { name, subject, groups, expiresAt, accessToken } = state.credentials;
    const provider = await cliOidc(config).stillSignedIn(accessToken, subject);
    io.out(`${name} (${subject}) at ${config.issuer.href}; groups ${groups.join(', ') || 'none'}; until ${expiresAt}`);
    if (provider === 'revoked') {
      io.err(
        "the provider no longer accepts this sign-in (the identity disabled or the grant revoked): the CLI's commands that act are refused until you sign in again",
      );
      return EXIT_FAILED;
    }
    io.out(provider === 'yes' ? 'the provider still accepts it' : 'the provider did not answer: it is taken as valid until it expires');
    return EXIT_OK;
  },
};

export const logout: Command = {
  access: { permission: 'none' },
  summary: 'forget the signed-in identity (its credentials file)',
  usage: (program) => `Usage: ${program} logout

Removes the credentials "${program} login" kept (CLI_CREDENTIALS_FILE).`,

  async run(args, { io }) {
    noPositionals(parseFlags({ args: [...args], options: {}, allowPositionals: true }).positionals);
    const { credentialsFile } = signInSettings(io);
    io.out((await removeCredentials(credentialsFile)) ? `signed out: ${credentialsFile} removed` : 'was not signed in');
    return EXIT_OK;
  },
};

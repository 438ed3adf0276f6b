/**
 * Entry point of the operator console: `CONSOLE_TOKEN=... npm run console`, then open
 * http://localhost:8080/?token=<token> once (the token moves into an HttpOnly cookie).
 * Reads CONSOLE_PORT (default 8080), CONSOLE_TOKEN (required), the Temporal settings of src/settings/temporal.ts
 * and the payload settings (encryption, on by default, and the payload store) and
 * CONSOLE_CODEC_CORS_ORIGINS: with encryption on, the console also serves the codec endpoint at /codec.
 */
import { dataConverterFor } from '../codec/data-converter.js';
import { isLoopbackHost } from '../settings/kms.js';
import { loadClientConfig } from '../settings/client.js';
import { loadConsoleConfig } from '../settings/console.js';
import { ConfigError } from '../settings/load.js';
import { temporalSettingsSource } from '../temporal/connection.js';
import { OidcSignIn } from '../identity/oidc-sign-in.js';
import { SealedCookies } from '../identity/sealed-cookie.js';
import { BearerIdentities } from '../identity/bearer-identities.js';
import { AuditTrail, openAuditStore } from '../audit/audit-trail.js';
import { ConnectionsClient } from '../client/connections.js';
import { createConsoleServer } from './app.js';
import { consoleSignIn } from './sign-in.js';

let consoleConfig;
let clientConfig;
try {
  consoleConfig = loadConsoleConfig();
  clientConfig = loadClientConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`console: refusing to start: ${error.problems.join('; ')}\n`);
  process.exit(2);
}

const connections = await ConnectionsClient.connect(clientConfig);
const audit = new AuditTrail(openAuditStore(consoleConfig.auditStore));
// Beyond loopback the console is reached through a TLS proxy: the cookie must not travel in clear.
const secureCookie = !isLoopbackHost(consoleConfig.host) || consoleConfig.mode === 'production';
const oidc = consoleConfig.signIn ? new OidcSignIn(consoleConfig.signIn.oidc) : undefined;
const signIn = oidc && consoleConfig.signIn ? consoleSignIn(oidc, new SealedCookies(consoleConfig.signIn.sessionKey), { secureCookie, audit }) : undefined;
// People's access tokens on the API: only with sign-in, and only of the clients it names.
const bearerIdentities =
  oidc && consoleConfig.signIn && consoleConfig.signIn.bearerClients.length > 0
    ? new BearerIdentities(oidc, { acceptedClients: consoleConfig.signIn.bearerClients })
    : undefined;
const console_ = createConsoleServer({
  connections,
  token: consoleConfig.token,
  signIn,
  bearerIdentities,
  codecToken: consoleConfig.codecToken,
  codecEncodeToken: consoleConfig.codecEncodeToken,
  secureCookie,
  payloadCodecs: dataConverterFor(consoleConfig)?.payloadCodecs,
  codecCorsOrigins: consoleConfig.codecCorsOrigins,
  defaultCustomerId: clientConfig.customerId,
  audit,
});
const { url } = await console_.listen(consoleConfig.port, consoleConfig.host);
const howToOpen = signIn
  ? `operators sign in through ${consoleConfig.signIn?.oidc.issuer.href}${consoleConfig.token ? `, or open ${url}/?token=<CONSOLE_TOKEN> once` : ''}`
  : `open ${url}/?token=<CONSOLE_TOKEN> once`;
process.stdout.write(
  `operator console on ${url}/ (${howToOpen}); Temporal ${clientConfig.temporal.address}, namespace ${clientConfig.temporal.namespace}, task queue ${clientConfig.temporal.taskQueue}${clientConfig.temporal.fromEnvConfig ? ` (${temporalSettingsSource(clientConfig.temporal)})` : ''}\n`,
);
process.stdout.write(`audit trail: ${audit.store.where}\n`);
process.stdout.write(
  consoleConfig.encryption
    ? `payload encryption on (key id ${consoleConfig.encryption.keyId}); codec endpoint ${url}/codec for the Web UI (origins ${consoleConfig.codecCorsOrigins.join(', ')}) and temporal --codec-endpoint\n`
    : 'payload encryption off (PAYLOAD_ENCRYPTION=off): payloads are stored in clear text; /codec answers 404\n',
);

async function shutdown(signal: string): Promise<void> {
  process.stdout.write(`console: ${signal}, closing\n`);
  await console_.close();
  await connections.close();
  await audit.close();
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void shutdown(signal));

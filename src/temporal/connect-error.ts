/**
 * Why a connection to Temporal failed, when TLS is the reason, as a sentence naming the variable to
 * fix. The SDK's own errors hide it: the clients' Connection says only "Failed to connect before the
 * deadline", the worker's a transport error ("operation was canceled" when the server wanted a client
 * certificate). One handshake by Node's TLS stack with the same CA, server name and client
 * certificate tells: then the HTTP/2 preface, because a server that requires a client certificate
 * refuses it (TLS 1.3) only after the handshake seems done; its first frame means TLS was accepted.
 * The worker throws TemporalConnectError with it; the pipeline client its TemporalUnavailableError.
 */
import { isIP } from 'node:net';
import { checkServerIdentity, connect, type ConnectionOptions } from 'node:tls';
import type { TemporalSettings } from '../settings/temporal.js';
import { temporalConnectionOptions, temporalSettingsSource } from './connection.js';

const PROBE_TIMEOUT_MS = 5_000;
/** The HTTP/2 client preface and an empty SETTINGS frame: a gRPC server answers with its SETTINGS. */
const H2_PREFACE = Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0])]);

type ProbeOutcome = { readonly accepted: true } | { readonly accepted: false; readonly code: string; readonly message: string };

function probe(host: string, port: number, options: ConnectionOptions): Promise<ProbeOutcome> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, ALPNProtocols: ['h2'], ...options });
    const done = (outcome: ProbeOutcome) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => done({ accepted: false, code: 'ETIMEDOUT', message: `no TLS answer within ${PROBE_TIMEOUT_MS} ms` }), PROBE_TIMEOUT_MS);
    socket.once('secureConnect', () => socket.write(H2_PREFACE));
    socket.once('data', () => done({ accepted: true }));
    // OpenSSL's own message is a multi-line dump; its `reason` ("tlsv13 alert certificate required") says it.
    socket.once('error', (error: Error & { code?: string; reason?: string }) =>
      done({ accepted: false, code: error.code ?? '', message: (error.reason ?? error.message).replace(/\s+/g, ' ').trim() }),
    );
    socket.once('close', () => done({ accepted: false, code: 'ECONNRESET', message: 'the server closed the connection during the TLS handshake' }));
  });
}

const UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_SIGNATURE_FAILURE',
]);
const NOT_TLS = new Set(['ERR_SSL_WRONG_VERSION_NUMBER', 'ERR_SSL_PACKET_LENGTH_TOO_LONG', 'ERR_SSL_HTTP_REQUEST', 'ECONNRESET', 'EPIPE']);

/** A sentence saying what in TLS made the connection fail and which variable fixes it; undefined when TLS is not the reason. */
export async function explainConnectFailure(settings: Pick<TemporalSettings, 'address' | 'transport' | 'fromEnvConfig'>): Promise<string | undefined> {
  const { transport } = settings;
  const options = await temporalConnectionOptions(settings);
  const colon = settings.address.lastIndexOf(':');
  const host = settings.address.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
  const port = Number(settings.address.slice(colon + 1));

  if (options.tls === false) {
    // Plain TCP failed: a server that completes a TLS handshake wants TLS (certificates unchecked: this only asks whether it speaks TLS).
    const outcome = await probe(host, port, { rejectUnauthorized: false, ...(isIP(host) ? {} : { servername: host }) });
    const speaksTls = outcome.accepted || /alert/i.test(outcome.code);
    return speaksTls
      ? `the server speaks TLS and this client does not: set TEMPORAL_TLS_CA_PATH to the server's CA (or TEMPORAL_TLS=true when a public CA signed its certificate)`
      : undefined;
  }

  const tls = options.tls === true ? {} : options.tls;
  const name = tls.serverNameOverride ?? host;
  const outcome = await probe(host, port, {
    ...(tls.serverRootCACertificate ? { ca: tls.serverRootCACertificate } : {}),
    ...(tls.clientCertPair ? { cert: tls.clientCertPair.crt, key: tls.clientCertPair.key } : {}),
    ...(isIP(name) ? {} : { servername: name }),
    // The certificate must be valid for the name the SDK checks: the override, else the address's host.
    checkServerIdentity: (_host, certificate) => checkServerIdentity(name, certificate),
  });
  if (outcome.accepted) return undefined;
  const { code, message } = outcome;
  const trusted = transport.tlsCaPath
    ? `the CA in TEMPORAL_TLS_CA_PATH (${transport.tlsCaPath})`
    : transport.tlsCa
      ? `the CA from ${transport.tlsCa.from}`
      : "the system's CAs (set TEMPORAL_TLS_CA_PATH to the cluster's CA)";
  const nameFrom = transport.tlsServerName
    ? (settings.fromEnvConfig?.['TLS server name'] ?? 'TEMPORAL_TLS_SERVER_NAME')
    : 'the host of TEMPORAL_ADDRESS (set TEMPORAL_TLS_SERVER_NAME to a name it is valid for)';
  const certificate = transport.tlsCertPath
    ? `the client certificate in TEMPORAL_TLS_CERT_PATH (${transport.tlsCertPath})`
    : transport.tlsCertPair
      ? `the client certificate from ${transport.tlsCertPair.crt.from}`
      : '';
  if (UNTRUSTED.has(code)) return `TLS: the server's certificate is not signed by ${trusted} (${message})`;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return `TLS: the server's certificate is not valid for ${name}, taken from ${nameFrom} (${message})`;
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') return `TLS: the server's certificate is out of its validity period (${message})`;
  if (/CERTIFICATE_REQUIRED|HANDSHAKE_FAILURE/.test(code) && !certificate) {
    return `TLS: the server requires a client certificate (mutual TLS): set TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH (${message})`;
  }
  if (
    /ALERT_(BAD_CERTIFICATE|UNKNOWN_CA|CERTIFICATE_UNKNOWN|UNSUPPORTED_CERTIFICATE|CERTIFICATE_EXPIRED|CERTIFICATE_REVOKED|ACCESS_DENIED|HANDSHAKE_FAILURE)/.test(
      code,
    )
  ) {
    return `TLS: the server refused ${certificate || 'this client'} (${message})`;
  }
  if (NOT_TLS.has(code)) return `TLS: the server at ${settings.address} did not complete a TLS handshake; does it serve TLS on this port? (${message})`;
  if (code === 'ECONNREFUSED' || code === 'ETIMEDOUT' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') return undefined;
  return `TLS handshake failed: ${message}${code ? ` (${code})` : ''}`;
}

/** The worker could not reach Temporal at start-up; the message says why, naming the variable to fix when TLS is the reason. */
export class TemporalConnectError extends Error {
  override readonly name = 'TemporalConnectError';
  constructor(
    readonly address: string,
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super(`cannot reach Temporal at ${address}: ${reason}`, options);
  }
}

/** The SDK's error, led by the TLS reason when there is one, and followed by where the settings came from when a Temporal profile gave some. */
export async function connectFailureReason(settings: Pick<TemporalSettings, 'address' | 'transport' | 'fromEnvConfig'>, error: unknown): Promise<string> {
  const said = error instanceof Error ? error.message : String(error);
  const why = await explainConnectFailure(settings).catch(() => undefined);
  const source = settings.fromEnvConfig ? ` (settings: ${temporalSettingsSource(settings)})` : '';
  return `${why ? `${why}; the SDK said: ${said}` : said}${source}`;
}

/**
 * Connection options for Temporal from the `temporal` section of src/config.ts, the same for the
 * worker's NativeConnection and the clients' Connection: both take `{ address, apiKey, tls }` with
 * the SDK's TLSConfig (`serverRootCACertificate`, `serverNameOverride`, `clientCertPair`).
 */
import { readFile } from 'node:fs/promises';
import type { TemporalSettings } from './config.js';

export interface TemporalTlsOptions {
  /** A self-hosted cluster's private CA; unset, the system's roots verify the server (Temporal Cloud). */
  readonly serverRootCACertificate?: Buffer;
  /** Checked against the server's certificate and sent as SNI instead of the address's host. */
  readonly serverNameOverride?: string;
  /** mTLS: the client certificate and its key. */
  readonly clientCertPair?: { readonly crt: Buffer; readonly key: Buffer };
}

export interface TemporalConnectionOptions {
  readonly address: string;
  readonly apiKey?: string;
  readonly tls: boolean | TemporalTlsOptions;
}

/** A TLS file that config's start-up check accepted but that could not be read when connecting. */
export class TemporalTlsFileError extends Error {
  override readonly name = 'TemporalTlsFileError';
  constructor(
    readonly variable: string,
    readonly path: string,
    options?: ErrorOptions,
  ) {
    super(`${variable}: cannot read ${path}`, options);
  }
}

async function readTlsFile(variable: string, path: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (error) {
    throw new TemporalTlsFileError(variable, path, { cause: error });
  }
}

export async function temporalConnectionOptions({ address, transport }: Pick<TemporalSettings, 'address' | 'transport'>): Promise<TemporalConnectionOptions> {
  const apiKey = transport.apiKey ? { apiKey: transport.apiKey } : {};
  const [ca, crt, key] = await Promise.all([
    transport.tlsCaPath ? readTlsFile('TEMPORAL_TLS_CA_PATH', transport.tlsCaPath) : undefined,
    transport.tlsCertPath ? readTlsFile('TEMPORAL_TLS_CERT_PATH', transport.tlsCertPath) : undefined,
    transport.tlsKeyPath ? readTlsFile('TEMPORAL_TLS_KEY_PATH', transport.tlsKeyPath) : undefined,
  ]);
  const tls: TemporalTlsOptions = {
    ...(ca ? { serverRootCACertificate: ca } : {}),
    ...(transport.tlsServerName ? { serverNameOverride: transport.tlsServerName } : {}),
    ...(crt && key ? { clientCertPair: { crt, key } } : {}),
  };
  if (Object.keys(tls).length > 0) return { address, ...apiKey, tls };
  // An API key implies TLS (Temporal Cloud); otherwise plain TCP unless asked.
  return { address, ...apiKey, tls: transport.tls || Boolean(transport.apiKey) };
}

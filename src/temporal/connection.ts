/**
 * Connection options for Temporal from the `temporal` section of src/settings/temporal.ts, the same for the
 * worker's NativeConnection and the clients' Connection: both take `{ address, apiKey, tls, metadata }`
 * with the SDK's TLSConfig (`serverRootCACertificate`, `serverNameOverride`, `clientCertPair`). Our
 * TLS files are read here, and TEMPORAL_API_KEY_FILE's token (src/temporal/api-key-file.ts keeps the
 * connections on its renewals); a Temporal profile's CA and certificate were read by config already.
 */
import { readFile } from 'node:fs/promises';
import type { TemporalSettings } from '../settings/temporal.js';
import { readApiKeyFile } from '../settings/temporal-api-key-file.js';

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
  /** gRPC metadata sent with every call: a Temporal profile's `grpc_meta`, TEMPORAL_GRPC_META_*. */
  readonly metadata?: Readonly<Record<string, string>>;
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
  // TEMPORAL_API_KEY_FILE is read again now: the token may have been renewed since the process started.
  const token = transport.apiKeyFile ? await readApiKeyFile(transport.apiKeyFile.path) : transport.apiKey;
  const apiKey = token ? { apiKey: token } : {};
  // A copy: the SDK's Connection adds its own headers (client-name, ...) to the object it is given.
  const metadata = transport.metadata ? { metadata: { ...transport.metadata } } : {};
  const [ca, crt, key] = await Promise.all([
    transport.tlsCaPath ? readTlsFile('TEMPORAL_TLS_CA_PATH', transport.tlsCaPath) : undefined,
    transport.tlsCertPath ? readTlsFile('TEMPORAL_TLS_CERT_PATH', transport.tlsCertPath) : undefined,
    transport.tlsKeyPath ? readTlsFile('TEMPORAL_TLS_KEY_PATH', transport.tlsKeyPath) : undefined,
  ]);
  const serverRootCACertificate = ca ?? transport.tlsCa?.value;
  const clientCertPair = crt && key ? { crt, key } : transport.tlsCertPair && { crt: transport.tlsCertPair.crt.value, key: transport.tlsCertPair.key.value };
  const tls: TemporalTlsOptions = {
    ...(serverRootCACertificate ? { serverRootCACertificate } : {}),
    ...(transport.tlsServerName ? { serverNameOverride: transport.tlsServerName } : {}),
    ...(clientCertPair ? { clientCertPair } : {}),
  };
  if (Object.keys(tls).length > 0) return { address, ...apiKey, ...metadata, tls };
  // An API key implies TLS (Temporal Cloud); otherwise plain TCP unless asked.
  return { address, ...apiKey, ...metadata, tls: transport.tls || Boolean(token) };
}

/**
 * Where the connection settings came from, for start-up lines and connection errors: those Temporal's
 * environment configuration gave, by source; everything else is our TEMPORAL_* variables or defaults.
 */
export function temporalSettingsSource({ fromEnvConfig }: Pick<TemporalSettings, 'fromEnvConfig'>): string {
  if (!fromEnvConfig) return 'TEMPORAL_* variables and defaults';
  const bySource = new Map<string, string[]>();
  for (const [setting, source] of Object.entries(fromEnvConfig)) bySource.set(source, [...(bySource.get(source) ?? []), setting]);
  const given = [...bySource].map(([source, settings]) => `${settings.join(', ')} from ${source}`);
  return `${given.join('; ')}; the rest from TEMPORAL_* variables and defaults`;
}

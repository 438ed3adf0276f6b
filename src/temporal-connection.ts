/**
 * Connection options for Temporal from the `temporal` section of src/config.ts, the same for the
 * worker's NativeConnection and the clients' Connection (both take `{ address, apiKey, tls }`).
 */
import { readFile } from 'node:fs/promises';
import type { TemporalSettings } from './config.js';

export interface TemporalConnectionOptions {
  readonly address: string;
  readonly apiKey?: string;
  readonly tls: boolean | { readonly clientCertPair: { readonly crt: Buffer; readonly key: Buffer } };
}

export async function temporalConnectionOptions({ address, transport }: Pick<TemporalSettings, 'address' | 'transport'>): Promise<TemporalConnectionOptions> {
  const apiKey = transport.apiKey ? { apiKey: transport.apiKey } : {};
  if (transport.tlsCertPath && transport.tlsKeyPath) {
    const [crt, key] = await Promise.all([readFile(transport.tlsCertPath), readFile(transport.tlsKeyPath)]);
    return { address, ...apiKey, tls: { clientCertPair: { crt, key } } };
  }
  // An API key implies TLS (Temporal Cloud); otherwise plain TCP unless asked.
  return { address, ...apiKey, tls: transport.tls || Boolean(transport.apiKey) };
}

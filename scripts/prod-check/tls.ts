/**
 * `npm run prod:check -- --tls`'s throwaway PKI, made with the `openssl` command into the run
 * directory: a CA, the frontend's server certificate (SAN localhost and 127.0.0.1), a client
 * certificate for the workers and the driver, one for the server's own system worker (it reaches
 * the frontend like any client, so mTLS applies to it too), and a second, unrelated CA that the
 * refusal check trusts instead of the real one. EC P-256 keys, PKCS#8, valid for two days.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The name the server certificate carries besides 127.0.0.1; the clients check against it. */
export const TLS_SERVER_NAME = 'localhost';
const DAYS = '2';

export class TlsSetupError extends Error {
  override readonly name = 'TlsSetupError';
}

export interface KeyPair {
  readonly cert: string;
  readonly key: string;
}

export interface ProdCheckPki {
  readonly dir: string;
  readonly caCert: string;
  readonly server: KeyPair;
  readonly client: KeyPair;
  readonly systemWorker: KeyPair;
  /** A CA that signed nothing the server shows: trusting it alone must fail the handshake. */
  readonly otherCaCert: string;
}

export const OPENSSL_INSTALL_HINT = 'the openssl command is needed for --tls: apt-get install -y openssl';

export function hasOpenssl(): boolean {
  return spawnSync('openssl', ['version'], { stdio: 'ignore' }).status === 0;
}

function openssl(args: readonly string[], cwd: string): void {
  const result = spawnSync('openssl', args, { cwd, encoding: 'utf8' });
  if (result.status !== 0)
    throw new TlsSetupError(`openssl ${args[0]} failed (${result.error?.message ?? `exit ${result.status}`}): ${(result.stderr || '').trim().slice(-1_000)}`);
}

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** A self-signed CA certificate and its key. */
function makeCa(dir: string, name: string, commonName: string): KeyPair {
  const pair = { cert: join(dir, `${name}.pem`), key: join(dir, `${name}-key.pem`) };
  const ext = join(dir, `${name}.ext`);
  writeFileSync(
    ext,
    [
      '[req]',
      'distinguished_name = dn',
      'x509_extensions = ca',
      '[dn]',
      '[ca]',
      'basicConstraints = critical, CA:TRUE',
      'keyUsage = critical, keyCertSign, cRLSign',
      'subjectKeyIdentifier = hash',
      '',
    ].join('\n'),
  );
  openssl(['req', '-x509', ...EC_KEY, '-keyout', pair.key, '-out', pair.cert, '-days', DAYS, '-subj', `/CN=${commonName}`, '-config', ext], dir);
  return pair;
}

/** A leaf certificate signed by `ca`, for a server or a client. */
function makeLeaf(dir: string, ca: KeyPair, name: string, commonName: string, usage: 'serverAuth' | 'clientAuth', altNames?: string): KeyPair {
  const pair = { cert: join(dir, `${name}.pem`), key: join(dir, `${name}-key.pem`) };
  const csr = join(dir, `${name}.csr`);
  const ext = join(dir, `${name}.ext`);
  writeFileSync(
    ext,
    [
      'basicConstraints = critical, CA:FALSE',
      'keyUsage = critical, digitalSignature',
      `extendedKeyUsage = ${usage}`,
      'authorityKeyIdentifier = keyid',
      ...(altNames ? [`subjectAltName = ${altNames}`] : []),
      '',
    ].join('\n'),
  );
  openssl(['req', '-new', ...EC_KEY, '-keyout', pair.key, '-out', csr, '-subj', `/CN=${commonName}`], dir);
  openssl(
    [
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      ca.cert,
      '-CAkey',
      ca.key,
      '-set_serial',
      `0x7${randomBytes(8).toString('hex')}`,
      '-days',
      DAYS,
      '-extfile',
      ext,
      '-out',
      pair.cert,
    ],
    dir,
  );
  return pair;
}

export function createPki(runDir: string): ProdCheckPki {
  if (!hasOpenssl()) throw new TlsSetupError(OPENSSL_INSTALL_HINT);
  const dir = join(runDir, 'tls');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const ca = makeCa(dir, 'ca', 'prod-check throwaway CA');
  const other = makeCa(dir, 'other-ca', 'prod-check unrelated CA');
  return {
    dir,
    caCert: ca.cert,
    server: makeLeaf(dir, ca, 'server', TLS_SERVER_NAME, 'serverAuth', `DNS:${TLS_SERVER_NAME}, IP:127.0.0.1`),
    client: makeLeaf(dir, ca, 'client', 'aggregation-connections worker', 'clientAuth'),
    systemWorker: makeLeaf(dir, ca, 'system-worker', 'temporal system worker', 'clientAuth'),
    otherCaCert: other.cert,
  };
}

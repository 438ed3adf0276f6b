/**
 * An identity provider for Temporal's JWT authorizer, as the tests and `prod:check --authorization`
 * need one: an RS256 key published
 * as a JWKS at a loopback address (what the production server's `authorization.jwtKeyProvider` reads)
 * and tokens minted under it with the `permissions` claim Temporal's default claim mapper reads;
 * `stranger` signs with a key the JWKS does not publish, under the same key id.
 */
import { createServer } from 'node:http';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey as JoseKey } from 'jose';

export const TOKEN_AUDIENCE = 'temporal.lender.example';
export const TOKEN_ISSUER = 'https://id.lender.example';

export interface Signer {
  readonly key: JoseKey;
  readonly kid: string;
}

export interface TokenOptions {
  readonly audience?: string;
  /** jose's expiry: a duration ('10m', '20s') or seconds since the epoch. */
  readonly expiresIn?: string | number;
}

export interface TokenProvider {
  /** The JWKS address the server reads the provider's keys from. */
  readonly jwksUri: string;
  readonly audience: string;
  /** The key the JWKS publishes. */
  readonly provider: Signer;
  /** A key it does not publish (same key id). */
  readonly stranger: Signer;
  /** A token as the provider issues it, with `permissions` (`<namespace>:<role>`), signed by the provider unless told. */
  token(permissions: readonly string[], options?: TokenOptions & { readonly signer?: Signer }): Promise<string>;
  close(): Promise<void>;
}

/** A token as the provider issues it: RS256 under a key of its JWKS, the permissions Temporal's claim mapper reads. */
export function signToken(
  signer: Signer,
  permissions: readonly string[],
  { audience = TOKEN_AUDIENCE, expiresIn = '10m' }: TokenOptions = {},
): Promise<string> {
  return new SignJWT({ permissions: [...permissions] })
    .setProtectedHeader({ alg: 'RS256', kid: signer.kid })
    .setSubject('pipeline:loan-origination')
    .setIssuer(TOKEN_ISSUER)
    .setAudience(audience)
    .setIssuedAt()
    .setExpirationTime(expiresIn)
    .sign(signer.key);
}

/** Generates the keys and serves the JWKS on 127.0.0.1 (a free port); close() stops it. */
export async function startTokenProvider(): Promise<TokenProvider> {
  const [ours, theirs] = await Promise.all([generateKeyPair('RS256'), generateKeyPair('RS256')]);
  const provider: Signer = { key: ours.privateKey, kid: 'provider-1' };
  const stranger: Signer = { key: theirs.privateKey, kid: 'provider-1' };
  const published = { keys: [{ ...(await exportJWK(ours.publicKey)), kid: provider.kid, alg: 'RS256', use: 'sig' }] };
  const keys = createServer((_, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(published));
  });
  await new Promise<void>((resolve) => keys.listen(0, '127.0.0.1', resolve));
  const { port } = keys.address() as { port: number };
  return {
    jwksUri: `http://127.0.0.1:${port}/jwks`,
    audience: TOKEN_AUDIENCE,
    provider,
    stranger,
    token: (permissions, { signer = provider, ...options } = {}) => signToken(signer, permissions, options),
    close: () => new Promise<void>((resolve) => keys.close(() => resolve())),
  };
}

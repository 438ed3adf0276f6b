/**
 * What the console keeps in a browser between requests (a signed-in session, a sign-in under way),
 * sealed: an encrypted JWT (JWE `dir` + A256GCM) under the console's session key, so the browser can
 * neither read nor change it, and a cookie of another console (another key) or of another purpose is
 * refused by name. Its expiry is inside the seal: a cookie kept past it is refused however the
 * browser keeps cookies.
 */
import { EncryptJWT, errors, jwtDecrypt, type JWTPayload } from 'jose';

/** Both clocks may be this far apart (the console's replicas, the browser holding the cookie). */
export const SEAL_CLOCK_TOLERANCE_S = 30;
const ISSUER = 'aggregation-connections-console';
export const SESSION_KEY_BYTES = 32;

export type SealPurpose = 'session' | 'sign-in';

/** The sealed cookie is absent of meaning here: tampered, sealed by another key, or for another purpose. */
export class SealedCookieInvalidError extends Error {
  override readonly name = 'SealedCookieInvalidError';
  constructor(
    readonly purpose: SealPurpose,
    detail: string,
  ) {
    super(`the ${purpose} cookie is not one this console sealed (${detail}): it was changed, or comes from another console`);
  }
}

export class SealedCookieExpiredError extends Error {
  override readonly name = 'SealedCookieExpiredError';
  constructor(readonly purpose: SealPurpose) {
    super(purpose === 'session' ? 'the session has expired: sign in again' : 'the sign-in took too long (over 10 minutes): start it again');
  }
}

export class SealedCookies {
  private readonly key: Uint8Array;

  constructor(key: Uint8Array) {
    if (key.length !== SESSION_KEY_BYTES) throw new TypeError(`the session key must be ${SESSION_KEY_BYTES} bytes, got ${key.length}`);
    this.key = Uint8Array.from(key);
  }

  /** `claims` sealed for `purpose` until `expiresAt` (ms since the epoch). */
  seal(purpose: SealPurpose, claims: JWTPayload, expiresAt: number): Promise<string> {
    return new EncryptJWT(claims)
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
      .setIssuer(ISSUER)
      .setAudience(purpose)
      .setIssuedAt()
      .setExpirationTime(Math.floor(expiresAt / 1000))
      .encrypt(this.key);
  }

  /** The claims sealed for `purpose`; SealedCookieExpiredError past its expiry, SealedCookieInvalidError for anything else. */
  async open(purpose: SealPurpose, sealed: string): Promise<JWTPayload> {
    try {
      const { payload } = await jwtDecrypt(sealed, this.key, {
        issuer: ISSUER,
        audience: purpose,
        clockTolerance: SEAL_CLOCK_TOLERANCE_S,
        requiredClaims: ['exp'],
      });
      return payload;
    } catch (error) {
      if (error instanceof errors.JWTExpired) throw new SealedCookieExpiredError(purpose);
      if (error instanceof errors.JOSEError) throw new SealedCookieInvalidError(purpose, error.code);
      throw error;
    }
  }
}

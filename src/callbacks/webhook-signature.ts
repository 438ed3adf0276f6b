/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com, "Signature scheme"): HMAC-SHA256
 * over `<webhook-id>.<webhook-timestamp>.<body>` with the secret's bytes (the base64 after `whsec_`),
 * sent as `v1,<base64>`; with several secrets (a rotation), one signature each, space-separated, and a
 * receiver accepts the message if any one verifies. The reference libraries (`standardwebhooks` on npm
 * and PyPI) verify what this signs (test/callbacks/webhook-signature.test.ts).
 */
import { createHmac } from 'node:crypto';

export class WebhookSecretError extends Error {
  override readonly name = 'WebhookSecretError';
}

const SECRET = /^whsec_([A-Za-z0-9+/]+={0,2})$/;

/** The key bytes of a `whsec_<base64>` secret (at least 24 bytes: Standard Webhooks asks 24 to 64). */
export function secretBytes(secret: string): Buffer {
  const match = SECRET.exec(secret.trim());
  const bytes = match?.[1] === undefined ? undefined : Buffer.from(match[1], 'base64');
  if (bytes === undefined || bytes.length < 24 || bytes.length > 64)
    throw new WebhookSecretError('a webhook secret must be whsec_ followed by the base64 of 24 to 64 bytes');
  return bytes;
}

export interface SignedHeaders {
  readonly 'webhook-id': string;
  readonly 'webhook-timestamp': string;
  readonly 'webhook-signature': string;
}

/** The three headers of one attempt, signed with every secret given (at least one). */
export function signWebhook(secrets: readonly string[], webhookId: string, timestampSeconds: number, body: string): SignedHeaders {
  if (secrets.length === 0) throw new WebhookSecretError('no secret to sign with');
  const timestamp = String(Math.floor(timestampSeconds));
  const signed = `${webhookId}.${timestamp}.${body}`;
  const signatures = secrets.map((secret) => `v1,${createHmac('sha256', secretBytes(secret)).update(signed).digest('base64')}`);
  return { 'webhook-id': webhookId, 'webhook-timestamp': timestamp, 'webhook-signature': signatures.join(' ') };
}

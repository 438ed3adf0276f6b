/**
 * Completion-callback messages as the product signs them (src/callbacks/webhook-signature.ts), for the
 * tests of docs/pipelines.md's receivers (test/docs/pipelines-examples.test.ts, the TypeScript one;
 * test/docs/pipelines-examples-python.test.ts, the Python one): a rotation's two secrets, a secret the
 * product does not hold, and the messages each receiver must accept or refuse.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { signWebhook, type SignedHeaders } from '../../src/callbacks/webhook-signature.js';
import { webhookIdOf, type CallbackEvent } from '../../src/contract/callbacks/callback-definitions.js';

const secret = () => `whsec_${randomBytes(32).toString('base64')}`;
export const OLD_SECRET = secret();
export const NEW_SECRET = secret();
export const OTHER_SECRET = secret();

/** An event as the delivery workflow posts it: completed, its result by reference; a non-ASCII byte or two. */
export function completedEvent(): CallbackEvent {
  const runId = randomUUID();
  const webhookId = webhookIdOf(runId);
  return {
    type: 'connection.completed',
    timestamp: new Date().toISOString(),
    data: {
      workflowId: 'connection-lender-a:app-é42',
      runId,
      customerId: 'lender-a',
      status: 'Completed',
      loginId: randomUUID(),
      resultRef: {
        url: `https://pipelines.lender-a.example/v1/results/lender-a/${webhookId}`,
        token: randomBytes(32).toString('base64url'),
        expiresAt: new Date(Date.now() + 172_800_000).toISOString(),
      },
    },
  };
}

export interface Message {
  readonly body: string;
  readonly headers: SignedHeaders & Record<string, string>;
}

/** Signed now (or `ageSeconds` ago) with both secrets of a rotation, as every attempt is while the file holds two. */
export function signed(event: CallbackEvent, ageSeconds = 0): Message {
  const body = JSON.stringify(event);
  return { body, headers: { ...signWebhook([OLD_SECRET, NEW_SECRET], webhookIdOf(event.data.runId), Date.now() / 1000 - ageSeconds, body) } };
}

export interface ReceiverCase {
  readonly name: string;
  /** The receiver's secret. */
  readonly secret: string;
  readonly body: string;
  readonly headers: Record<string, string>;
  readonly accepted: boolean;
}

/** The messages both receivers judge, and whether each should pass. */
export function receiverCases(): ReceiverCase[] {
  const message = signed(completedEvent());
  const other = signed(completedEvent());
  return [
    { name: 'the new secret', secret: NEW_SECRET, ...message, accepted: true },
    { name: 'the old secret, during the rotation', secret: OLD_SECRET, ...message, accepted: true },
    {
      name: 'headers in another case',
      secret: NEW_SECRET,
      body: message.body,
      headers: {
        'Webhook-Id': message.headers['webhook-id'],
        'Webhook-Timestamp': message.headers['webhook-timestamp'],
        'Webhook-Signature': message.headers['webhook-signature'],
      },
      accepted: true,
    },
    { name: 'a tampered body', secret: NEW_SECRET, body: message.body.replace('"Completed"', '"Failed"'), headers: { ...message.headers }, accepted: false },
    { name: 'a body with a byte more', secret: NEW_SECRET, body: `${message.body} `, headers: { ...message.headers }, accepted: false },
    {
      name: 'another webhook-id',
      secret: NEW_SECRET,
      body: message.body,
      headers: { ...message.headers, 'webhook-id': other.headers['webhook-id'] },
      accepted: false,
    },
    {
      name: "another message's signature",
      secret: NEW_SECRET,
      body: message.body,
      headers: { ...message.headers, 'webhook-signature': other.headers['webhook-signature'] },
      accepted: false,
    },
    { name: 'a secret the product does not hold', secret: OTHER_SECRET, ...message, accepted: false },
    { name: 'a timestamp ten minutes old', secret: NEW_SECRET, ...signed(completedEvent(), 600), accepted: false },
    {
      name: 'no signature',
      secret: NEW_SECRET,
      body: message.body,
      headers: { 'webhook-id': message.headers['webhook-id'], 'webhook-timestamp': message.headers['webhook-timestamp'] },
      accepted: false,
    },
  ];
}

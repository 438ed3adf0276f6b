// A completion-callback receiver (docs/pipelines.md): Node's http server and the `standardwebhooks`
// npm package. Run: WEBHOOK_SECRET=whsec_... PORT=8443 npx tsx receiver.ts (behind your TLS proxy).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { pathToFileURL } from 'node:url';
import { Webhook } from 'standardwebhooks';

/** The event's JSON (the fields a receiver reads; docs/pipelines.md has them all). */
export interface CallbackEvent {
  type: 'connection.completed' | 'connection.failed' | 'connection.cancelled' | 'book.refresh.completed' | 'book.refresh.cancelled';
  timestamp: string;
  data: {
    workflowId: string;
    runId: string;
    customerId: string;
    status: 'Completed' | 'Failed' | 'Cancelled';
    counts?: { done: number; refreshed: number; needsEndUser: number; failed: number; failedByType: Record<string, number> };
    loginId?: string;
    failure?: { type: string; message: string; serviceCode?: string };
    result?: unknown;
    resultRef?: { url: string; token: string; expiresAt: string };
  };
}

export interface Answer {
  status: number;
  body: string;
}

const MAX_BODY_BYTES = 16 * 1024 * 1024; // a result in the body can be large

/**
 * Checks one request and hands a new event to `accept`. `accept` must be quick (put the event in your
 * queue or table); do the slow work, such as fetching the result, after the answer.
 */
export function callbackHandler(secret: string, accept: (event: CallbackEvent, webhookId: string) => void | Promise<void>) {
  const webhook = new Webhook(secret); // whsec_...: any one of the message's signatures must match it
  const seen = new Set<string>(); // in production: a table with a unique key on the webhook-id

  return async function handle(body: string, headers: Record<string, string | string[] | undefined>): Promise<Answer> {
    const header = (name: string) => {
      const value = Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
      return (Array.isArray(value) ? value[0] : value) ?? '';
    };
    const signed = { 'webhook-id': header('webhook-id'), 'webhook-timestamp': header('webhook-timestamp'), 'webhook-signature': header('webhook-signature') };
    let event: CallbackEvent;
    try {
      // The exact bytes received (never re-serialized JSON); refuses a timestamp more than 5 minutes away.
      event = webhook.verify(body, signed) as CallbackEvent;
    } catch {
      return { status: 401, body: 'bad signature' };
    }
    const webhookId = signed['webhook-id'];
    if (seen.has(webhookId)) return { status: 200, body: 'already received' }; // a retry: acknowledge, do nothing
    seen.add(webhookId);
    try {
      await accept(event, webhookId);
    } catch (error) {
      seen.delete(webhookId); // not stored: the answer is not 2xx, so it comes again
      throw error;
    }
    return { status: 204, body: '' };
  };
}

/** The handler behind node:http: reads the raw body, answers at once. */
export function createReceiver(secret: string, accept: (event: CallbackEvent, webhookId: string) => void | Promise<void>): Server {
  const handle = callbackHandler(secret, accept);
  return createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) request.destroy();
      else chunks.push(chunk);
    });
    request.on('end', () => {
      const reply = (answer: Answer) => response.writeHead(answer.status, { 'content-type': 'text/plain' }).end(answer.body);
      handle(Buffer.concat(chunks).toString('utf8'), request.headers).then(reply, () => reply({ status: 500, body: 'not stored' }));
    });
  });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const secret = process.env.WEBHOOK_SECRET ?? '';
  if (!secret.startsWith('whsec_')) throw new Error('set WEBHOOK_SECRET to your whsec_... secret');
  createReceiver(secret, (event, webhookId) => {
    console.log(webhookId, event.type, event.data.workflowId, event.data.status);
  }).listen(Number(process.env.PORT ?? 8443));
}

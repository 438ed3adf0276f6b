/**
 * The aggregation service the worker's activities call (AGGREGATOR_*), and the default tenant the
 * worker and the clients share.
 */
import { z } from 'zod';
import { NonEmpty, doc, group } from './document.js';

export const CustomerId = doc(
  NonEmpty.default('demo-lender'),
  'The tenant (the customer id path segment) the CLI, the demo and pipelines start connections for unless told otherwise; the worker serves whichever tenant a connection names.',
);

export const AggregatorVars = group(
  z.object({
    AGGREGATOR_BASE_URL: doc(
      z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).default('http://127.0.0.1:4010'),
      'The aggregation service: the sandbox of `npm start` / `npm run sandbox` by default; point it at the real service in production.',
    ),
    AGGREGATOR_CUSTOMER_ID: CustomerId,
    AGGREGATOR_AUTH_HEADER: doc(
      z
        .string()
        .trim()
        .regex(/^[A-Za-z0-9-]+$/, { message: 'must be an HTTP header name' })
        .default('x-api-key'),
      "The header that carries the calling application's credential.",
    ),
    AGGREGATOR_AUTH_SECRET: doc(z.string().min(1).optional(), "The calling application's credential, sent in AGGREGATOR_AUTH_HEADER; unset: no header.", {
      secret: true,
    }),
    AGGREGATOR_TIMEOUT_MS: doc(
      z.coerce.number().int().min(100).max(600_000).default(60_000),
      'Per-request timeout in ms of the data calls (100..600000); a slow one is retried.',
    ),
    AGGREGATOR_AUTHORIZE_TIMEOUT_MS: doc(
      // Under the Authorize activity's 5-minute start-to-close timeout, with room for its reply to be read.
      z.coerce.number().int().min(100).max(280_000).default(240_000),
      "Per-request timeout in ms of an Authorize (100..280000). An Authorize with credentials or answers is never resent, so the worker waits for the service's own outcome: the service runs a sync call ~210 s before dispatching it, and an institution may take over a minute to accept an answer. Past it the connection fails once (ServiceUnavailable), without sending the credentials again.",
    ),
  }),
  'The aggregation service',
  "Where the worker's activities call the service, and as whom.",
);

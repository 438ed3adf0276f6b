/**
 * The connection's input: the contract between the pipeline client (which parses it before it starts
 * a connection), the input-validation activity (which parses it again, outside the workflow sandbox,
 * as the workflow's first step) and the workflow and activities (which use its types only). A bad
 * input fails fast with a message naming the field and never reaches the service. zod lives here, so
 * workflow code imports this file with `import type` only: the workflow bundle stays free of zod.
 */
import { z } from 'zod';
import { AccountsDetailOptions, AttributePackageOperation, AttributesRequest, Uuid } from '../../aggregator/schemas.js';
import { DEFAULT_TIMING } from './timing.js';

export { DEFAULT_TIMING };

const LiveSession = z.strictObject({
  kind: z.literal('live'),
  institution: z.string().trim().min(1, { message: 'must not be empty' }),
  username: z.string().min(1, { message: 'must not be empty' }),
  password: z.string().min(1, { message: 'must not be empty' }),
  save: z.boolean().default(true),
});
const CachedSession = z.strictObject({ kind: z.literal('cached'), loginId: Uuid });
const RefreshSession = z.strictObject({ kind: z.literal('refresh'), loginId: Uuid });

export const SessionInput = z.discriminatedUnion('kind', [LiveSession, CachedSession, RefreshSession], {
  error: (issue) => (issue.code === 'invalid_union' ? 'kind must be one of live, cached, refresh' : undefined),
});
export type SessionInput = z.infer<typeof SessionInput>;

export const AttributesProduct = z.union([z.strictObject({ package: AttributePackageOperation }), z.strictObject({ custom: AttributesRequest })]);
export type AttributesProduct = z.infer<typeof AttributesProduct>;

export const ProductsInput = z
  .strictObject({
    accountsDetail: AccountsDetailOptions.optional(),
    investments: z.boolean().optional(),
    attributes: AttributesProduct.optional(),
  })
  .refine((products) => products.accountsDetail !== undefined || products.investments === true || products.attributes !== undefined, {
    message: 'must request at least one of accountsDetail, investments, attributes',
  });
export type ProductsInput = z.infer<typeof ProductsInput>;

const Milliseconds = (min: number, max: number) => z.number().int().min(min).max(max);

/**
 * How a pending operation is polled (README, "Polling strategies"). `timer` (the default, the design's):
 * a durable workflow timer per poll, each poll visible in history and the state query.
 * `activity-retry`: polls are retries of one activity, the server waits the interval; no workflow
 * task per poll. `heartbeat`: one activity loops, sleeping between polls and heartbeating its count.
 */
export const POLL_STRATEGIES = ['timer', 'activity-retry', 'heartbeat'] as const;
export type PollStrategy = (typeof POLL_STRATEGIES)[number];

export const TimingInput = z.strictObject({
  pollIntervalMs: Milliseconds(1, 10 * 60_000).default(DEFAULT_TIMING.pollIntervalMs),
  pollTimeoutMs: Milliseconds(1, 24 * 60 * 60_000).default(DEFAULT_TIMING.pollTimeoutMs),
  answerTimeoutMs: Milliseconds(1, 7 * 24 * 60 * 60_000).default(DEFAULT_TIMING.answerTimeoutMs),
  maxAnswerAttempts: z.number().int().min(1).max(10).default(DEFAULT_TIMING.maxAnswerAttempts),
  /**
   * An unattended connection outside a book not granted room at its tenant's admission within this
   * long asks again (an admission terminated by hand, a full queue). Absent means 5 minutes.
   */
  admissionAskAgainMs: Milliseconds(1_000, 24 * 60 * 60_000).optional(),
  /** Absent means `timer` (histories recorded before the option existed have none). */
  pollStrategy: z.enum(POLL_STRATEGIES, { error: `must be one of ${POLL_STRATEGIES.join(', ')}` }).optional(),
});
export type Timing = z.infer<typeof TimingInput>;

/**
 * A completion callback (docs/pipelines.md): where to post the outcome when the connection ends. The
 * URL must be under one of the tenant's CALLBACK_URLS prefixes (checked at start by the client and the
 * worker's validation, and again at each delivery); `includeResult` needs the tenant in
 * CALLBACK_RESULT_IN_BODY.
 */
export const CallbackInput = z.strictObject({
  url: z.string().trim().min(1, { message: 'must not be empty' }).max(2048, { message: 'must be at most 2048 characters' }),
  includeResult: z.boolean().default(false),
});
export type CallbackInput = z.infer<typeof CallbackInput>;

/** The book refresh that started a connection, told its end (src/workflows/window/connection-window-end.ts). */
export const BookLink = z.strictObject({
  refreshWorkflowId: z.string().trim().min(1, { message: 'must not be empty' }).max(1000, { message: 'must be at most 1000 characters' }),
});
export type BookLink = z.infer<typeof BookLink>;

export const ConnectionInput = z
  .strictObject({
    /** Tenant path segment at the service (the lender's customer id). */
    customerId: z.string().trim().min(1, { message: 'must not be empty' }),
    session: SessionInput,
    products: ProductsInput,
    timing: TimingInput.default(TimingInput.parse({})),
    /**
     * No operator watches this connection (a scheduled refresh): a challenge ends it at once as
     * EndUserActionRequired, flagging the login, instead of waiting for an answer nobody will give.
     */
    unattended: z.boolean().default(false),
    /** Post the outcome here when the connection ends (absent: no callback). */
    callback: CallbackInput.optional(),
    /** Set by a book refresh on the connections it starts: the refresh to tell how this one ended. */
    book: BookLink.optional(),
  })
  .superRefine((input, ctx) => {
    // A connection tells only a refresh of its own tenant's book (ids: src/contract/book/book-definitions.ts).
    if (input.book && !input.book.refreshWorkflowId.startsWith(`book-${input.customerId}:`)) {
      ctx.addIssue({
        code: 'custom',
        path: ['book', 'refreshWorkflowId'],
        message: `must be a book refresh of the same tenant (book-${input.customerId}:<cadence>-<night>)`,
      });
    }
    if (input.unattended && input.session.kind === 'live') {
      ctx.addIssue({ code: 'custom', path: ['unattended'], message: "needs a cached or refresh session (a live session needs the end user's credentials)" });
    }
    // Attributes need a cached session after accounts detail (spec, "Attributes" flow); a live
    // session can only be followed by a cached one if the login is saved.
    if (input.products.attributes && input.session.kind === 'live' && !input.session.save) {
      ctx.addIssue({ code: 'custom', path: ['session', 'save'], message: 'must be true when attributes are requested (they need a cached session)' });
    }
  });
/** What callers pass (defaults optional). */
export type ConnectionInputArgs = z.input<typeof ConnectionInput>;
/** What the workflow works with (defaults applied). */
export type ConnectionInput = z.infer<typeof ConnectionInput>;

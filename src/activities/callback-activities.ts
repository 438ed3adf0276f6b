/**
 * The activities of completion callbacks (src/contract/callbacks/callback-definitions.ts):
 * - scheduleCallback: when a connection ends, starts its delivery workflow (idempotent by id, so a
 *   retried activity or a replayed end starts it once);
 * - mintResultClaim: the one-time token of a result sent by reference (random, so an activity's);
 * - deliverCallback: one signed POST, its outcome returned (never thrown), counted in metrics.
 * The tenant's allowlist is checked again at each attempt: a URL removed from CALLBACK_URLS after the
 * start is no longer posted to.
 */
import { randomBytes } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import {
  CALLBACK_DELIVERY_WORKFLOW_TYPE,
  callbackWorkflowId,
  type CallbackAttemptOutcome,
  type CallbackDeliveryInput,
  type ResultReference,
} from '../contract/callbacks/callback-definitions.js';
import { CustomerIdKey } from '../contract/search-attributes.js';
import { DEFAULT_PRIORITY_POLICY, startPriority, type PriorityPolicy } from '../contract/priority.js';
import { callbackUrlProblem, displayedUrl } from '../callbacks/callback-urls.js';
import { postWebhook } from '../callbacks/delivery-request.js';
import { signWebhook, WebhookSecretError } from '../callbacks/webhook-signature.js';
import { readWebhookSecrets } from '../callbacks/webhook-secrets.js';
import { NO_CALLBACK_METRICS, type CallbackMetrics } from '../metrics/callback-metrics.js';
import type { CallbackSettings } from '../callbacks/callback-policy.js';

export interface CallbackActivitiesDeps {
  /** A client of the worker's own namespace. */
  readonly temporal: Client;
  readonly taskQueue: string;
  readonly settings: CallbackSettings;
  readonly metrics?: CallbackMetrics | undefined;
  readonly priority?: PriorityPolicy | undefined;
  /** How long a receiver has to answer one attempt (15 s unless given). */
  readonly attemptTimeoutMs?: number | undefined;
}

export interface ScheduleCallbackInput {
  /** The ended run: its id names the delivery. */
  readonly sourceRunId: string;
  readonly delivery: CallbackDeliveryInput;
}

export interface DeliverCallbackInput {
  readonly customerId: string;
  readonly url: string;
  readonly webhookId: string;
  readonly body: string;
  /** A failure of this attempt ends the delivery (counted given_up, not retrying). */
  readonly lastChance: boolean;
}

/** How long a receiver has to answer one attempt: well inside the activity's 30 s. */
const ATTEMPT_TIMEOUT_MS = 15_000;

export function createCallbackActivities({
  temporal,
  taskQueue,
  settings,
  metrics = NO_CALLBACK_METRICS,
  priority = DEFAULT_PRIORITY_POLICY,
  attemptTimeoutMs = ATTEMPT_TIMEOUT_MS,
}: CallbackActivitiesDeps) {
  return {
    async scheduleCallback({ sourceRunId, delivery }: ScheduleCallbackInput): Promise<'started' | 'already-started'> {
      try {
        await temporal.workflow.start(CALLBACK_DELIVERY_WORKFLOW_TYPE, {
          workflowId: callbackWorkflowId(delivery.customerId, sourceRunId),
          taskQueue,
          args: [delivery],
          typedSearchAttributes: new TypedSearchAttributes([{ key: CustomerIdKey, value: delivery.customerId }]),
          // Deliveries are background work: behind live connections, beside maintenance.
          priority: startPriority(priority, 'maintenance', delivery.customerId),
        });
        return 'started';
      } catch (error) {
        if (error instanceof WorkflowExecutionAlreadyStartedError) return 'already-started';
        throw error;
      }
    },

    // Async: activities return promises, and the worker awaits it like any other.
    // eslint-disable-next-line @typescript-eslint/require-await
    async mintResultClaim({
      customerId,
      webhookId,
      expiresAt,
    }: {
      readonly customerId: string;
      readonly webhookId: string;
      readonly expiresAt: string;
    }): Promise<ResultReference> {
      const base = settings.entryUrl.replace(/\/+$/, '');
      return {
        url: `${base}/v1/results/${encodeURIComponent(customerId)}/${encodeURIComponent(webhookId)}`,
        token: randomBytes(32).toString('base64url'),
        expiresAt,
      };
    },

    async deliverCallback({ customerId, url, webhookId, body, lastChance }: DeliverCallbackInput): Promise<CallbackAttemptOutcome> {
      const outcome = await attempt();
      metrics.attempted(outcome.delivered ? 'delivered' : lastChance || outcome.permanent === true ? 'given_up' : 'retrying');
      return outcome;

      async function attempt(): Promise<CallbackAttemptOutcome> {
        const problem = callbackUrlProblem(settings.urls, customerId, url);
        if (problem !== undefined) return { delivered: false, permanent: true, error: `the callback URL ${displayedUrl(url)} ${problem}` };
        let secrets: string[];
        try {
          secrets = await readWebhookSecrets(settings.secretFiles, customerId);
        } catch (error) {
          if (error instanceof WebhookSecretError) return { delivered: false, permanent: true, error: error.message };
          throw error;
        }
        const headers = signWebhook(secrets, webhookId, Date.now() / 1000, body);
        try {
          const answer = await postWebhook({ url, headers: { ...headers }, body, timeoutMs: attemptTimeoutMs });
          if (answer.statusCode >= 200 && answer.statusCode < 300) return { delivered: true, statusCode: answer.statusCode };
          const excerpt = answer.excerpt.replace(/\s+/g, ' ').trim().slice(0, 200);
          return {
            delivered: false,
            statusCode: answer.statusCode,
            error: `the receiver answered ${answer.statusCode}${answer.statusCode >= 300 && answer.statusCode < 400 ? ' (redirects are not followed)' : ''}${excerpt === '' ? '' : `: ${excerpt}`}`,
          };
        } catch (error) {
          return { delivered: false, error: `cannot reach the receiver: ${(error as Error).message}` };
        }
      }
    },
  };
}

export type CallbackActivities = ReturnType<typeof createCallbackActivities>;

import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';

/** The floor's activities: they do no work of their own. */
export const floorActivities = {
  /** Returns what it is given. */
  echo(value: string): Promise<string> {
    return Promise.resolve(value);
  },
  /** The heartbeat strategy's loop with a no-op poll: heartbeat, sleep, `polls` times. */
  async heartbeatPolls(polls: number, intervalMs: number): Promise<number> {
    const context = Context.current();
    for (let poll = 0; poll < polls; poll += 1) {
      context.heartbeat({ pollCount: poll, code: 'pending' });
      await context.sleep(intervalMs);
    }
    return polls;
  },
};
export type FloorActivities = typeof floorActivities;

/** One call to the aggregation service as plain as it can be made: a JSON body POSTed with fetch. */
export interface ServiceCall {
  readonly url: string;
  readonly body: unknown;
}

/**
 * The product's two calls of a cached connection made the plainest way (Node's fetch, JSON.parse; no
 * client library, validation, codec, logging or metrics): what the calls themselves cost a worker,
 * so the product's own work beyond them can be told apart from the service's (bench/floor-ratio.ts).
 */
export const floorServiceActivities = {
  /**
   * The answer's JSON. Only a 200 is one: a 202 (pending) or a 203 (challenge) would need the polls or
   * answers the product makes, and the sides would no longer do the same work. A 429 or a 5xx is
   * retried; any other status fails the run at once, naming it. Cancelling the activity aborts the call.
   */
  async serviceCall({ url, body }: ServiceCall): Promise<unknown> {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: Context.current().cancellationSignal,
    });
    const text = await response.text();
    if (response.status !== 200) {
      const message = `${url} answered HTTP ${response.status}: ${text.slice(0, 200)}`;
      const passing = response.status === 429 || response.status >= 500;
      throw passing ? ApplicationFailure.retryable(message, 'ServiceUnavailable') : ApplicationFailure.nonRetryable(message, 'ServiceAnswerNotData');
    }
    return JSON.parse(text) as unknown;
  },
};
export type FloorServiceActivities = typeof floorServiceActivities;

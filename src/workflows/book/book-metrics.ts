/**
 * The book refresh's metrics, recorded from its workflow code through the SDK's workflow meter (the
 * worker exports them beside the rest, skipped during replay). The one exception to "no metrics from
 * workflow code": a refresh is one workflow per tenant and cadence, not one per connection, and the
 * window lives nowhere else.
 * - `aggregation_book_window{customer_id,cadence}`: connections the window allows in flight (0 once
 *   the refresh has ended: a gauge left at its last value reads as a refresh still holding room);
 * - `aggregation_book_in_flight{customer_id,cadence}`: connections in flight;
 * - `aggregation_book_outcomes{customer_id,cadence,outcome}`: logins done, by outcome.
 */
import { metricMeter } from '@temporalio/workflow';
import type { BookOutcomeKind } from '../../contract/book/book-definitions.js';

export interface BookMetrics {
  window(size: number, inFlight: number): void;
  /** The refresh ended: it holds no room and has nothing in flight. */
  ended(): void;
  outcome(kind: BookOutcomeKind): void;
}

export function bookMetrics(customerId: string, cadence: string): BookMetrics {
  const tags = { customer_id: customerId, cadence };
  const windowGauge = metricMeter.createGauge('aggregation_book_window', 'int', '', 'Children the book refresh window allows in flight');
  const inFlightGauge = metricMeter.createGauge('aggregation_book_in_flight', 'int', '', 'Children of the book refresh in flight');
  const outcomes = metricMeter.createCounter('aggregation_book_outcomes', '', 'Logins a book refresh finished, by outcome');
  return {
    window(size, inFlight) {
      windowGauge.set(size, tags);
      inFlightGauge.set(inFlight, tags);
    },
    ended() {
      windowGauge.set(0, tags);
      inFlightGauge.set(0, tags);
    },
    outcome(kind) {
      outcomes.add(1, { ...tags, outcome: kind });
    },
  };
}

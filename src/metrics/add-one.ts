/** Adds one to a counter; a metric never fails the call it counts. */
import type { MetricCounter } from '@temporalio/common';

export function addOne(counter: MetricCounter, tags: Record<string, string>): void {
  try {
    counter.add(1, tags);
  } catch {
    // The runtime is shutting down: the count is lost with the process.
  }
}

/**
 * `aggregation_connections{status}`: the running connections of the worker's task queue by their
 * ConnectionStatus search attribute, counted through visibility every WORKER_STATUS_GAUGE_INTERVAL_S
 * seconds by the worker's main thread (one count query per status; the server cannot group by a
 * custom attribute), never by workflow code. Every replica counts the whole fleet, so the dashboard
 * takes max() across replicas, not a sum.
 *
 * A count that fails (visibility down, a timeout, a namespace without the attribute) never stops the
 * worker: the gauge keeps its last value (the exporter cannot withdraw a series), the failure is
 * logged once per kind until a round succeeds again, which is logged too, and the next round tries
 * again. A round starts only after the previous one ended, so a slow visibility store is never asked
 * twice at once.
 */
import { isGrpcServiceError, type Client } from '@temporalio/client';
import type { Logger, MetricGauge, MetricMeter } from '@temporalio/common';
import { CONNECTION_WORKFLOW_TYPE, RUNNING_CONNECTION_STATUSES, type ConnectionStatus } from '../contract/connection/connection-definitions.js';
import { ConnectionStatusKey } from '../contract/search-attributes.js';

export const CONNECTIONS_GAUGE_NAME = 'aggregation_connections';

/** The visibility query of the running connections of the fleet's task queues (the service queue, the unattended pool's) in one status. */
export function connectionCountQuery(taskQueues: readonly string[], status: ConnectionStatus): string {
  const queues = [...new Set(taskQueues)];
  return [
    'ExecutionStatus = "Running"',
    `WorkflowType = ${JSON.stringify(CONNECTION_WORKFLOW_TYPE)}`,
    queues.length === 1 ? `TaskQueue = ${JSON.stringify(queues[0])}` : `TaskQueue IN (${queues.map((queue) => JSON.stringify(queue)).join(', ')})`,
    `${ConnectionStatusKey.name} = ${JSON.stringify(status)}`,
  ].join(' AND ');
}

/** The gauge on `meter` (which carries the worker's namespace and task_queue tags). */
export function connectionsGauge(meter: MetricMeter): MetricGauge {
  return meter.createGauge(
    CONNECTIONS_GAUGE_NAME,
    'int',
    '',
    'Running connections by ConnectionStatus, fleet-wide on the task queue (every replica counts them all: take max() across replicas).',
  );
}

/** What failed, for logging once: the error's name and gRPC status code, not its message (which may vary). */
function failureKindOf(error: unknown): string {
  const grpc = isGrpcServiceError(error) ? error : error instanceof Error && isGrpcServiceError(error.cause) ? error.cause : undefined;
  const name = error instanceof Error ? error.name : typeof error;
  return grpc ? `${name} (gRPC status ${grpc.code})` : name;
}

export interface ConnectionStatusGaugeOptions {
  /** A client of the worker's namespace. */
  readonly client: Pick<Client, 'workflow'>;
  /** The service queue, and the unattended pool's when it is separate: connections run on both. */
  readonly taskQueues: readonly string[];
  readonly gauge: Pick<MetricGauge, 'set'>;
  readonly logger: Pick<Logger, 'warn' | 'info'>;
  /** Between the end of a round and the start of the next. */
  readonly intervalMs: number;
}

export class ConnectionStatusGauge {
  /** The failure kinds logged since the last round that counted every status. */
  private readonly logged = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly options: ConnectionStatusGaugeOptions) {}

  /** Counts every status once and sets the gauge for those counted; never throws. */
  async countOnce(): Promise<void> {
    const { client, taskQueues, gauge, logger } = this.options;
    const taskQueue = taskQueues.join(', ');
    const counts = await Promise.allSettled(RUNNING_CONNECTION_STATUSES.map((status) => client.workflow.count(connectionCountQuery(taskQueues, status))));
    const failures = new Map<string, unknown>();
    counts.forEach((counted, index) => {
      const status = RUNNING_CONNECTION_STATUSES[index]!;
      if (counted.status === 'fulfilled') gauge.set(counted.value.count, { status });
      else failures.set(failureKindOf(counted.reason), counted.reason);
    });
    if (failures.size === 0) {
      if (this.logged.size > 0) logger.info(`${CONNECTIONS_GAUGE_NAME}: counting connections by status works again`, { taskQueue });
      this.logged.clear();
      return;
    }
    for (const [kind, error] of failures) {
      if (this.logged.has(kind)) continue;
      this.logged.add(kind);
      logger.warn(
        `${CONNECTIONS_GAUGE_NAME}: could not count connections by status (${kind}); the gauge keeps its last values, retried every round, logged again only once it works`,
        {
          taskQueue,
          error: error instanceof Error ? error.message : String(error),
        },
      );
    }
  }

  /** The first round at once, then one an interval after each ends, until stop(). */
  start(): void {
    const next = () => {
      if (this.stopped) return;
      // countOnce logs its own failures; a gauge or logger that throws (the runtime shutting down) is no reason to stop.
      this.round = this.countOnce()
        .catch(() => undefined)
        .finally(() => {
          this.round = undefined;
          if (!this.stopped) this.timer = setTimeout(next, this.options.intervalMs).unref();
        });
    };
    next();
  }

  /** No round after this; resolves once the one in flight, if any, ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.round;
  }
}

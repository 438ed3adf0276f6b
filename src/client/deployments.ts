/**
 * The worker deployment's versions, as Temporal's Worker Deployment Versioning keeps them: which
 * build is current (new connections and every AutoUpgrade workflow run there), which one ramps, and
 * which older builds still hold pinned connections. Used by the CLI's `deployment` commands, by a
 * worker that makes its own build current (dev stacks) and by the deploy rehearsal.
 */
import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import { millisOfTimestamp } from '../temporal/timestamps.js';
import { ConnectionClientError, grpcCodeOf } from './errors.js';

const VersionStatus = proto.temporal.api.enums.v1.WorkerDeploymentVersionStatus;
const DrainageStatus = proto.temporal.api.enums.v1.VersionDrainageStatus;
/** gRPC status codes (the client's ServiceError carries them as numbers). */
const NOT_FOUND = 5;
const FAILED_PRECONDITION = 9;

export type VersionStatusName = 'inactive' | 'current' | 'ramping' | 'draining' | 'drained' | 'created' | 'unknown';

export interface DeploymentVersionSummary {
  readonly buildId: string;
  readonly status: VersionStatusName;
  /** Whether Temporal has seen the version's last pinned workflow close (DRAINED) while it was not current. */
  readonly drained: boolean;
  readonly createdAt?: string | undefined;
  readonly currentSince?: string | undefined;
}

export interface DeploymentDescription {
  readonly deploymentName: string;
  /** Absent: no current version yet (unversioned workers take the queue's tasks). */
  readonly currentBuildId?: string | undefined;
  readonly rampingBuildId?: string | undefined;
  readonly rampingPercentage?: number | undefined;
  readonly versions: readonly DeploymentVersionSummary[];
}

/** A deployment call Temporal refused, with the deployment and build it was about. */
export class DeploymentCommandError extends ConnectionClientError {
  override readonly name = 'DeploymentCommandError';
  constructor(
    readonly deploymentName: string,
    readonly buildId: string | undefined,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

const STATUS_NAMES = new Map<number, VersionStatusName>([
  [VersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_INACTIVE, 'inactive'],
  [VersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_CURRENT, 'current'],
  [VersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_RAMPING, 'ramping'],
  [VersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_DRAINING, 'draining'],
  [VersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_DRAINED, 'drained'],
  [VersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_CREATED, 'created'],
]);

function isoOf(timestamp: Parameters<typeof millisOfTimestamp>[0]): string | undefined {
  const ms = millisOfTimestamp(timestamp);
  return ms === undefined ? undefined : new Date(ms).toISOString();
}

/**
 * How long a routing change waits for its propagation at most: in deploy:check it took 1-2.4 s. A wait
 * bounded only by `waitMs` (60 s there) may be why deploy:check's test in the suite took 144 s against
 * 89 s the run before (not shown); a lagging routing is still a routing set.
 */
const PROPAGATION_WAIT_MS = 5_000;

export class WorkerDeployments {
  readonly deploymentName: string;
  private readonly client: Client;
  private readonly identity: string;

  constructor(client: Client, deploymentName: string) {
    this.client = client;
    this.deploymentName = deploymentName;
    this.identity = client.options.identity ?? 'aggregation-connections';
  }

  private get namespace(): string {
    return this.client.options.namespace;
  }

  /** The versions Temporal knows for this deployment; `undefined` when no worker of it has polled yet. */
  async describe(): Promise<DeploymentDescription | undefined> {
    let info;
    try {
      ({ workerDeploymentInfo: info } = await this.client.workflowService.describeWorkerDeployment({
        namespace: this.namespace,
        deploymentName: this.deploymentName,
      }));
    } catch (error) {
      if (grpcCodeOf(error) === NOT_FOUND) return undefined;
      throw new DeploymentCommandError(
        this.deploymentName,
        undefined,
        `cannot describe worker deployment ${this.deploymentName}: ${(error as Error).message}`,
        { cause: error },
      );
    }
    const routing = info?.routingConfig;
    const rampingBuildId = routing?.rampingDeploymentVersion?.buildId || undefined;
    return {
      deploymentName: this.deploymentName,
      currentBuildId: routing?.currentDeploymentVersion?.buildId || undefined,
      rampingBuildId,
      rampingPercentage: rampingBuildId ? (routing?.rampingVersionPercentage ?? 0) : undefined,
      versions: (info?.versionSummaries ?? []).map((summary) => ({
        buildId: summary.deploymentVersion?.buildId ?? '',
        status: STATUS_NAMES.get(summary.status ?? 0) ?? 'unknown',
        drained: (summary.drainageInfo?.status ?? summary.drainageStatus) === DrainageStatus.VERSION_DRAINAGE_STATUS_DRAINED,
        createdAt: isoOf(summary.createTime),
        currentSince: isoOf(summary.currentSinceTime),
      })),
    };
  }

  /**
   * Makes a build current: new connections start there and AutoUpgrade workflows move there at their
   * next task. Temporal refuses a build none of whose workers has polled yet; `waitMs` keeps asking
   * that long (a worker that has just started), then gives up with the last refusal.
   */
  async setCurrent(buildId: string, { waitMs = 0 }: { waitMs?: number } = {}): Promise<void> {
    await this.route(buildId, waitMs, () =>
      this.client.workflowService.setWorkerDeploymentCurrentVersion({
        namespace: this.namespace,
        deploymentName: this.deploymentName,
        buildId,
        identity: this.identity,
      }),
    );
  }

  /** Sends `percentage` % of new connections (and AutoUpgrade workflows) to a build; 0 with an empty build id ends the ramp. */
  async setRamping(buildId: string, percentage: number, { waitMs = 0 }: { waitMs?: number } = {}): Promise<void> {
    if (!(percentage >= 0 && percentage <= 100))
      throw new DeploymentCommandError(this.deploymentName, buildId, `ramp percentage must be 0 to 100, got ${percentage}`);
    await this.route(buildId, waitMs, () =>
      this.client.workflowService.setWorkerDeploymentRampingVersion({
        namespace: this.namespace,
        deploymentName: this.deploymentName,
        buildId,
        percentage,
        identity: this.identity,
      }),
    );
  }

  /** Running workflows pinned to a build: a build can be retired once this is 0 and Temporal says DRAINED. */
  async pinnedRunning(buildId: string): Promise<number> {
    const { count } = await this.client.workflow.count(
      `TemporalWorkerDeploymentVersion = '${this.deploymentName}:${buildId}' AND TemporalWorkflowVersioningBehavior = 'Pinned' AND ExecutionStatus = 'Running'`,
    );
    return count;
  }

  /**
   * Deletes a version that no longer serves anything. Temporal refuses while it is current or
   * ramping, while pinned workflows may still need it (not DRAINED), and while its workers polled in
   * the last few minutes: stop them first.
   */
  async retire(buildId: string): Promise<void> {
    try {
      await this.client.workflowService.deleteWorkerDeploymentVersion({
        namespace: this.namespace,
        deploymentVersion: { deploymentName: this.deploymentName, buildId },
        identity: this.identity,
      });
    } catch (error) {
      throw new DeploymentCommandError(this.deploymentName, buildId, `cannot retire ${this.deploymentName}:${buildId}: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }

  /**
   * A routing change (`call`), then, with `waitMs`, until Temporal says it reached every task queue
   * partition: until then a connection started just after the change can still go to the build
   * before it (seen once in deploy:check's rollback on server 1.32.2).
   */
  private async route(buildId: string, waitMs: number, call: () => Promise<unknown>): Promise<void> {
    await this.retryWhileUnknown(buildId, waitMs, call);
    if (waitMs > 0) await this.routingPropagated(Date.now() + PROPAGATION_WAIT_MS);
  }

  /** Calls `call`, asking again for `waitMs` while the version is not known yet. */
  private async retryWhileUnknown(buildId: string, waitMs: number, call: () => Promise<unknown>): Promise<void> {
    const giveUpAt = Date.now() + waitMs;
    for (;;) {
      try {
        await call();
        return;
      } catch (error) {
        // NOT_FOUND / FAILED_PRECONDITION: the version (or its pollers) is not known to the server yet.
        const code = grpcCodeOf(error);
        const notYet = code === NOT_FOUND || code === FAILED_PRECONDITION;
        if (!notYet || Date.now() >= giveUpAt) {
          throw new DeploymentCommandError(this.deploymentName, buildId, `cannot route to ${this.deploymentName}:${buildId}: ${(error as Error).message}`, {
            cause: error,
          });
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  }

  /**
   * Until the deployment's routing is propagated, or `giveUpAt` (epoch ms): a server that does not say
   * (UNSPECIFIED) is taken at its word, and a routing that lags is still a routing set.
   */
  private async routingPropagated(giveUpAt: number): Promise<void> {
    const inProgress = proto.temporal.api.enums.v1.RoutingConfigUpdateState.ROUTING_CONFIG_UPDATE_STATE_IN_PROGRESS;
    while (Date.now() < giveUpAt) {
      const { workerDeploymentInfo } = await this.client.workflowService.describeWorkerDeployment({
        namespace: this.namespace,
        deploymentName: this.deploymentName,
      });
      if (workerDeploymentInfo?.routingConfigUpdateState !== inProgress) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

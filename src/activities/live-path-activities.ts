/**
 * How long live users' tasks wait to start on the service queue, read from the Temporal server's
 * own count (DescribeTaskQueue's statistics by priority key, for workflow and activity tasks) and
 * from this process's own live tasks over the last seconds (src/metrics/live-task-waits.ts). A
 * window (a book's refresh, a tenant's admission) judges the live path by it rather than by its own
 * children's times, which lengthen when unattended work queues behind unattended work, without a
 * live user feeling it. A local activity: a read of Temporal, outside the request budget.
 */
import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import type { LivePathReading } from '../contract/window/window-definitions.js';
import type { LiveTaskWaits, RecentWaits } from '../metrics/live-task-waits.js';

const QUEUE_TYPES = [
  proto.temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  proto.temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
] as const;

/**
 * gRPC codes that say the server will not give this reading (an older release, a namespace's key
 * without the permission): the window judges by its children instead, never waits on it.
 */
const NO_READING_CODES = new Set([3 /* INVALID_ARGUMENT */, 7 /* PERMISSION_DENIED */, 12 /* UNIMPLEMENTED */]);

/**
 * The server refreshes a queue's statistics every few seconds (measured on 1.32.2: about 5 s), and
 * every window of this worker asks: reads within this long share one call.
 */
const SHARED_READ_MS = 1_000;

export interface LivePathDeps {
  readonly temporal: Client;
  /** The service queue: where live connections' workflow and activity tasks wait. */
  readonly taskQueue: string;
  /** Priority keys up to this one are live users' (src/contract/priority.ts). */
  readonly liveKey: number;
  /** This process's live activity tasks' waits to start (src/metrics/live-task-waits.ts), where it runs live work. */
  readonly own?: LiveTaskWaits | undefined;
}

/**
 * The span of this process's live starts a reading takes: three of a window's fleet reads (5 s
 * apart), so a slow stretch is in more than one reading, and long enough to hold several of a
 * small fleet's live calls.
 */
export const OWN_WAITS_SPAN_MS = 15_000;

/**
 * The server's instant with this process's recent live activity starts beside it (window-controller.ts
 * says how each is judged). Without the server's count there is no reading: the
 * window judges by its children, as it does on such a server.
 */
export function combineLivePath(server: LivePathReading | null, activityStarts: RecentWaits | undefined): LivePathReading | null {
  if (server === null) return server;
  return activityStarts && activityStarts.samples > 0 ? { ...server, workerWaitMs: activityStarts.p90Ms, workerSamples: activityStarts.samples } : server;
}

/** What is read of the server's TaskQueueStats: its counts and seconds are Longs, or numbers; `Number` reads both. */
export interface BacklogStats {
  readonly approximateBacklogCount?: unknown;
  readonly approximateBacklogAge?: { readonly seconds?: unknown; readonly nanos?: number | null } | null;
}

function millisecondsOf(duration: BacklogStats['approximateBacklogAge']): number {
  if (!duration) return 0;
  return Number(duration.seconds ?? 0) * 1_000 + (duration.nanos ?? 0) / 1e6;
}

/** The live keys' part of one queue type's statistics by priority key; undefined when none is listed. */
export function liveStatsOf(byPriorityKey: Readonly<Record<string, BacklogStats>> | null | undefined, liveKey: number): LivePathReading | undefined {
  if (!byPriorityKey || Object.keys(byPriorityKey).length === 0) return undefined;
  let waitMs = 0;
  let waiting = 0;
  for (const [key, stats] of Object.entries(byPriorityKey)) {
    if (Number(key) > liveKey) continue;
    const count = Number(stats.approximateBacklogCount ?? 0);
    if (count <= 0) continue;
    waiting += count;
    waitMs = Math.max(waitMs, millisecondsOf(stats.approximateBacklogAge));
  }
  return { waitMs: Math.round(waitMs), waiting };
}

export function createLivePathActivities({ temporal, taskQueue, liveKey, own }: LivePathDeps) {
  const namespace = temporal.options.namespace;
  let shared: { at: number; reading: Promise<LivePathReading | null> } | undefined;

  async function read(): Promise<LivePathReading | null> {
    let responses;
    try {
      responses = await Promise.all(
        QUEUE_TYPES.map((taskQueueType) =>
          temporal.workflowService.describeTaskQueue({ namespace, taskQueue: { name: taskQueue }, taskQueueType, reportStats: true }),
        ),
      );
    } catch (error) {
      if (NO_READING_CODES.has((error as { code?: number }).code ?? -1)) return null;
      throw error;
    }
    // A queue's statistics present and no priority key among them: nothing waits there (the server
    // lists only keys in use); no statistics at all: a server that does not count.
    const parts = responses.map((response) => liveStatsOf(response.statsByPriorityKey, liveKey) ?? (response.stats ? { waitMs: 0, waiting: 0 } : undefined));
    if (parts.every((part) => part === undefined)) return null;
    return parts.reduce<LivePathReading>((sum, part) => (part ? { waitMs: Math.max(sum.waitMs, part.waitMs), waiting: sum.waiting + part.waiting } : sum), {
      waitMs: 0,
      waiting: 0,
    });
  }

  return {
    /**
     * The live path as the server last counted it, with this process's live activity starts of the
     * last OWN_WAITS_SPAN_MS; null without the server's count.
     */
    async livePath(): Promise<LivePathReading | null> {
      const now = Date.now();
      if (!shared || now - shared.at >= SHARED_READ_MS) {
        const reading = read();
        shared = { at: now, reading };
        // A failed read is not shared with the reads after it.
        reading.catch(() => {
          if (shared?.reading === reading) shared = undefined;
        });
      }
      return combineLivePath(await shared.reading, own?.recent(OWN_WAITS_SPAN_MS, now));
    },
  };
}

export type LivePathActivities = ReturnType<typeof createLivePathActivities>;

/**
 * What a window (a book's refresh, a tenant's admission) watches besides its connections' ends:
 * a timer to look at those in flight while it waits, and the world outside (a throttle of its tenant,
 * the other windows of the fleet). Shared by book-refresh-run.ts and admission-run.ts. Deterministic
 * code only.
 */
import { sleep } from '@temporalio/workflow';
import type { LivePathReading, PublishedWindow, WindowControl } from '../../contract/window/window-definitions.js';
import type { WindowController } from './window-controller.js';
import type { SteadyClock } from '../steady-clock.js';

/**
 * One watch timer at a time, left running across waits: a timer per wait (started, then cancelled
 * when a connection ends first) would cost two events and two commands a connection. A wait that
 * needs an earlier look than the running timer gives (the first child's time became known after a
 * silent check's 30 s timer was armed) starts one more: without it, a service that went down then
 * was first looked at up to 30 s late.
 */
export class WatchTimer {
  /** When each running timer fires (workflow ms). */
  private readonly dues: number[] = [];
  private fired = false;

  constructor(private readonly clock: SteadyClock) {}

  /** Starts a timer unless one runs that fires as soon. */
  arm(ms: number): void {
    const due = this.clock.now() + ms;
    if (this.dues.length > 0 && Math.min(...this.dues) <= due) return;
    this.dues.push(due);
    const done = () => this.dues.splice(this.dues.indexOf(due), 1);
    sleep(ms).then(
      () => {
        // The timer fired: its task's time.
        this.clock.woke();
        done();
        this.fired = true;
      },
      () => {
        // Cancelled with the workflow: its own sequence ends it.
        done();
      },
    );
  }

  /** The timer fired and nobody has looked yet. */
  get due(): boolean {
    return this.fired;
  }

  /** The watch has looked. */
  looked(): void {
    this.fired = false;
  }
}

/** The calls to Temporal a look makes (local activities of the workflow's own proxy). */
export interface FleetCalls {
  tenantThrottle(input: { readonly customerId: string }): Promise<{ until: number; reason: string } | null>;
  fleetWindows(input: { readonly refreshWorkflowId: string }): Promise<PublishedWindow[]>;
  livePath(): Promise<LivePathReading | null>;
}

/**
 * Whether the service throttled the tenant (at most every throttleCheckMs), and the windows the other
 * books and admissions hold and the live path (every fleetCheckMs), told to the window. Each time is
 * taken before the call: the time a result comes back is not the same on replay.
 */
export class FleetLook {
  private lastThrottleCheck = Number.NEGATIVE_INFINITY;
  private lastFleetCheck = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly clock: SteadyClock,
    private readonly window: WindowController,
    private readonly of: { readonly customerId: string; readonly workflowId: string; readonly weight: number; readonly control: WindowControl },
    private readonly calls: FleetCalls,
  ) {}

  async lookAround(): Promise<void> {
    const { customerId, workflowId, weight, control } = this.of;
    const at = this.clock.now();
    if (at - this.lastThrottleCheck >= control.throttleCheckMs) {
      this.lastThrottleCheck = at;
      const pause = await this.clock.local(() => this.calls.tenantThrottle({ customerId }));
      if (pause) this.window.observeThrottle(pause.until, pause.reason, at);
    }
    if (at - this.lastFleetCheck >= control.fleetCheckMs) {
      this.lastFleetCheck = at;
      this.window.observeFleet(await this.clock.local(() => this.calls.fleetWindows({ refreshWorkflowId: workflowId })), weight);
      this.window.observeLivePath(await this.clock.local(() => this.calls.livePath()), at);
    }
  }
}

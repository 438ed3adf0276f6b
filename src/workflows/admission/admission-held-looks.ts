/**
 * When an admission looks in visibility for the starts its tenant's clients hold, apart from the run
 * (admission-run.ts) because it is paced by clients' wakes, not by the window: within
 * `ADMISSION_IDLE_MS` of a wake, at the pace the run asks, or at once on a wake unless a look was a
 * moment ago (many clients each wake once a second). A start the product's client held is not sent
 * to the admission one by one: a signal the workers take costs the stack about what the held
 * workflow does, and one read of visibility for held starts is cheaper than a storm's signals.
 * Deterministic, no Temporal calls.
 */
import { ADMISSION_DISCOVER_SOON_MS, ADMISSION_IDLE_MS, type AdmissionCarry } from '../../contract/admission/admission-definitions.js';

export class HeldLooks {
  /** A client that holds starts woke this admission (carried from run to run). */
  private discovering: boolean;
  private lastWake: number;
  /** A wake asked for a look now. */
  private asked = false;
  private lastLook = Number.NEGATIVE_INFINITY;

  constructor(carried: Pick<AdmissionCarry, 'discovering' | 'lastWakeAt'> | undefined) {
    this.discovering = carried?.discovering === true;
    this.lastWake = carried?.lastWakeAt ?? Number.NEGATIVE_INFINITY;
  }

  /** A client woke the admission at all (it remembers the runs it lets go from then on). */
  get on(): boolean {
    return this.discovering;
  }

  get lastWakeAt(): number {
    return this.lastWake;
  }

  /** A wake asked for a look that has not been taken. */
  get due(): boolean {
    return this.asked;
  }

  woke(now: number): void {
    this.discovering = true;
    this.lastWake = now;
    this.asked = true;
  }

  /** A client woke this run within `ADMISSION_IDLE_MS`: it looks for held starts (after that, a start's own wake starts the looks again). */
  wokenLately(now: number): boolean {
    return this.discovering && now - this.lastWake < ADMISSION_IDLE_MS;
  }

  /** Whether to look now, `everyMs` after the last look (or on a wake): a look taken is marked, a wake's ask is used up either way. */
  take(now: number, everyMs: () => number): boolean {
    const sinceLast = now - this.lastLook;
    const wanted = this.asked ? sinceLast >= ADMISSION_DISCOVER_SOON_MS : sinceLast >= everyMs();
    this.asked = false;
    if (!wanted || !this.wokenLately(now)) return false;
    this.lastLook = now;
    return true;
  }
}

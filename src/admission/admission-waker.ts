/**
 * Wakes tenants' admissions for the product's client after it holds a start, at most once every
 * `ADMISSION_WAKE_EVERY_MS` per tenant: a storm of held starts costs its admission one signal a
 * second, not one a start. A start that sends none is found all the same: a woken admission looks
 * for held starts every few seconds for a minute after its last wake (src/workflows/admission/admission-run.ts).
 */
import { ADMISSION_WAKE_EVERY_MS } from '../contract/admission/admission-definitions.js';
import { wakeAdmission, type AdmissionTarget } from './request-admission.js';

/** Tenants remembered at most; past it, those woken longest ago are forgotten (their next start wakes again). */
const TENANTS_REMEMBERED = 10_000;

export class AdmissionWaker {
  /** By tenant: when its last wake was delivered, or the wake on its way. */
  private readonly wakes = new Map<string, { readonly deliveredAt?: number; readonly sending?: Promise<void> }>();

  constructor(
    private readonly target: AdmissionTarget,
    private readonly everyMs: number = ADMISSION_WAKE_EVERY_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Resolves once the tenant's admission has been woken within `everyMs` (by this call or an earlier one); a failed wake is not remembered. */
  async wake(customerId: string): Promise<void> {
    const known = this.wakes.get(customerId);
    if (known?.sending) return await known.sending;
    if (known?.deliveredAt !== undefined && this.now() - known.deliveredAt < this.everyMs) return;
    const sending = wakeAdmission(this.target, customerId).then(
      () => this.remember(customerId, { deliveredAt: this.now() }),
      (error: unknown) => {
        this.wakes.delete(customerId);
        throw error;
      },
    );
    this.remember(customerId, { ...known, sending });
    await sending;
  }

  private remember(customerId: string, entry: { readonly deliveredAt?: number; readonly sending?: Promise<void> }): void {
    // Re-inserted: the map's order is the wakes' order, oldest first.
    this.wakes.delete(customerId);
    this.wakes.set(customerId, entry);
    if (this.wakes.size > TENANTS_REMEMBERED) {
      const oldest = this.wakes.keys().next().value as string;
      if (!this.wakes.get(oldest)?.sending) this.wakes.delete(oldest);
    }
  }
}

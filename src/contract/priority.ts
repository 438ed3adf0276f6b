/**
 * Who waits decides the order: every workflow starts with a Temporal Task Queue priority chosen by
 * its class (an end user answering now first, then a pipeline's cached retrieval, then an
 * unattended scheduled refresh, then forget and retention) and the tenant (customer id) as its
 * fairness key, weighted from configuration. Its activities inherit both. Shared by the client that
 * starts connections, the worker that starts retention timers and forgets, and the workflows that
 * show the priority in their state. No Node built-ins: the workflow bundle imports it.
 */

export const PRIORITY_CLASSES = ['live', 'pipeline', 'scheduled', 'maintenance'] as const;
export type PriorityClass = (typeof PRIORITY_CLASSES)[number];

/** Temporal's priority keys: 1 is served first, 5 last; 3 is what a start without one gets. */
export const PRIORITY_KEY_LIMITS = { min: 1, max: 5 } as const;
/** The server's own bounds on a fairness weight (it treats anything below as 0.001). */
export const FAIRNESS_WEIGHT_LIMITS = { min: 0.001, max: 1000 } as const;

export const DEFAULT_PRIORITY_KEYS: Readonly<Record<PriorityClass, number>> = Object.freeze({ live: 1, pipeline: 2, scheduled: 3, maintenance: 4 });

export interface PriorityPolicy {
  /** Priority key per class (1 first). */
  readonly keys: Readonly<Record<PriorityClass, number>>;
  /** Fairness weight per customer id; '*' for every other tenant; 1 where neither is set. */
  readonly tenantWeights: ReadonlyMap<string, number>;
}

export const DEFAULT_PRIORITY_POLICY: PriorityPolicy = Object.freeze({ keys: DEFAULT_PRIORITY_KEYS, tenantWeights: new Map<string, number>() });

/** What Temporal takes on a start (and activities inherit). */
export interface StartPriority {
  readonly priorityKey: number;
  readonly fairnessKey: string;
  readonly fairnessWeight: number;
}

/** A connection's class: live when its end user is there to answer, scheduled when nobody is, pipeline otherwise. */
export function connectionClassOf(input: { readonly session: { readonly kind: string }; readonly unattended?: boolean | undefined }): PriorityClass {
  if (input.session.kind === 'live') return 'live';
  return input.unattended ? 'scheduled' : 'pipeline';
}

export function tenantWeightOf(policy: PriorityPolicy, customerId: string): number {
  return policy.tenantWeights.get(customerId) ?? policy.tenantWeights.get('*') ?? 1;
}

/** The priority a workflow of this class and tenant starts with; `priorityKey` overrides the class's key. */
export function startPriority(policy: PriorityPolicy, priorityClass: PriorityClass, customerId: string, priorityKey?: number): StartPriority {
  return { priorityKey: priorityKey ?? policy.keys[priorityClass], fairnessKey: customerId, fairnessWeight: tenantWeightOf(policy, customerId) };
}

/** A priority key override given per start: an integer from 1 to 5. */
export function priorityKeyProblem(value: unknown): string | undefined {
  return Number.isInteger(value) && (value as number) >= PRIORITY_KEY_LIMITS.min && (value as number) <= PRIORITY_KEY_LIMITS.max
    ? undefined
    : `priority must be an integer from ${PRIORITY_KEY_LIMITS.min} (first) to ${PRIORITY_KEY_LIMITS.max} (last), got ${JSON.stringify(value)}`;
}

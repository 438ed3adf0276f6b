/**
 * What a connection's start is made of: the caller's options (rerun policy, priority key), checked,
 * and the workflow's start options they give (business key as id, reuse policy, search attributes,
 * priority). Apart from the client because both of its start calls build the same start here.
 */
import { TypedSearchAttributes } from '@temporalio/common';
import { parseOrRefuse } from '../validation/parse-or-refuse.js';
import { ConnectionInput } from '../contract/connection/connection-input.js';
import type { ConnectionInputArgs } from '../contract/connection/connection-input.js';
import type { FirstStep } from '../contract/connection/connection-definitions.js';
import { connectionStartAttributes } from '../contract/search-attributes.js';
import { connectionClassOf, priorityKeyProblem, startPriority, type PriorityPolicy } from '../contract/priority.js';
import { parseBusinessKey } from './business-key.js';
import { InvalidConnectionInputError } from './errors.js';

/**
 * What happens when a key's earlier connection has ended:
 * - `'never'`: refused (ConnectionAlreadyEndedError) whatever the outcome;
 * - `'if-failed'` (default): refused if it completed; a failed, cancelled or timed-out one starts again;
 * - `'always'`: a new run starts under the same key.
 * A key whose connection is still running always gives that running connection.
 */
export type RerunPolicy = 'never' | 'if-failed' | 'always';

export interface StartOptions {
  readonly rerun?: RerunPolicy;
  /**
   * Task Queue priority key, 1 (first) to 5 (last), in place of the one its class gets from config
   * (PRIORITY_LIVE, PRIORITY_PIPELINE, PRIORITY_SCHEDULED): live end users 1, pipelines 2, unattended 3.
   */
  readonly priority?: number;
}

/** Identifies one connection: the workflow id is the business key. */
export interface ConnectionRef {
  readonly workflowId: string;
}

export type FirstStepResult = ConnectionRef & FirstStep;

const REUSE_POLICY = {
  never: 'REJECT_DUPLICATE',
  'if-failed': 'ALLOW_DUPLICATE_FAILED_ONLY',
  always: 'ALLOW_DUPLICATE',
} as const;

/** The checked input of a start under `key` and its workflow start options on `taskQueue`; InvalidConnectionInputError names what is wrong. */
export function prepareStart(taskQueue: string, priority: PriorityPolicy, key: string, input: ConnectionInputArgs, options: StartOptions) {
  const args = parseOrRefuse(ConnectionInput, input, (problem, cause) => new InvalidConnectionInputError(problem, { cause }));
  const workflowId = parseBusinessKey(key, args.customerId);
  const rerun = options.rerun ?? 'if-failed';
  if (!(rerun in REUSE_POLICY)) throw new InvalidConnectionInputError(`rerun must be one of ${Object.keys(REUSE_POLICY).join(', ')}`);
  const priorityProblem = options.priority === undefined ? undefined : priorityKeyProblem(options.priority);
  if (priorityProblem) throw new InvalidConnectionInputError(priorityProblem);
  const pairs = connectionStartAttributes(args);
  return {
    workflowId,
    args,
    startOptions: {
      taskQueue,
      workflowIdConflictPolicy: 'USE_EXISTING' as const,
      workflowIdReusePolicy: REUSE_POLICY[rerun],
      typedSearchAttributes: new TypedSearchAttributes(pairs),
      // Who waits decides the order; the tenant is the fairness key (src/contract/priority.ts).
      priority: startPriority(priority, connectionClassOf(args), args.customerId, options.priority),
    },
  };
}

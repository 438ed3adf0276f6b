/**
 * A tenant's callback policy (from CALLBACK_* settings: src/settings/callbacks.ts) and whether a
 * connection's callback request is allowed for its tenant: the URL under the tenant's
 * prefixes, and the result in the body only for a tenant that opted in. Asked by the pipeline entry
 * before it starts anything and by the worker's input validation, so a start that skips the entry is
 * refused all the same.
 */
import type { CallbackInput } from '../contract/connection/connection-input.js';
import { callbackUrlProblem } from './callback-urls.js';

export interface CallbackSettings {
  /** Allowed URL prefixes by customer id; empty: callbacks off. */
  readonly urls: ReadonlyMap<string, readonly string[]>;
  readonly secretFiles: ReadonlyMap<string, string>;
  readonly resultInBody: ReadonlySet<string>;
  /** The pipeline entry's public address (results by reference). */
  readonly entryUrl: string;
}

/** Callbacks off: no tenant may ask for one. */
export const NO_CALLBACKS: CallbackSettings = Object.freeze({
  urls: new Map<string, string[]>(),
  secretFiles: new Map<string, string>(),
  resultInBody: new Set<string>(),
  entryUrl: 'http://pipeline-entry.invalid',
});

/** Why a callback request is refused: the field and the problem, or undefined when it is allowed. */
export interface CallbackRefusal {
  readonly field: 'url' | 'includeResult';
  readonly problem: string;
}

/** Whether the tenant may ask for this callback (the URL under its prefixes, the result in the body only if it opted in). */
export function callbackRequestRefusal(
  settings: Pick<CallbackSettings, 'urls' | 'resultInBody'>,
  customerId: string,
  callback: Pick<CallbackInput, 'url' | 'includeResult'> | undefined,
): CallbackRefusal | undefined {
  if (callback === undefined) return undefined;
  const problem = callbackUrlProblem(settings.urls, customerId, callback.url);
  if (problem !== undefined) return { field: 'url', problem };
  if (callback.includeResult && !settings.resultInBody.has(customerId))
    return { field: 'includeResult', problem: `tenant ${customerId} has not opted in to results in the callback body (CALLBACK_RESULT_IN_BODY)` };
  return undefined;
}

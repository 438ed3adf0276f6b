/**
 * What the worker's log says about its KMS: once per change of the provider's state (an outage is one
 * warning and one recovery, not one per call), once per key version revoked or key destroyed (such a
 * payload fails every task of its connection), and when sealing stops or goes on again.
 */
import type { KeyProviderHealth } from '../codec/key-provider-health.js';
import { KeyDestroyedError, KeyVersionRevokedError } from '../codec/payload-errors.js';

export interface KeyProviderLogger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** Keys (and versions) named as unreadable at most: a bound on what a flood of forged labels could grow. */
export const MAX_NAMED_UNREADABLE_KEYS = 100;

/** Logs `kms`'s changes to `logger` from now on; returns the unsubscribe. */
export function logKeyProviderChanges(kms: KeyProviderHealth, logger: KeyProviderLogger): () => void {
  let state = kms.status.state;
  const namedUnreadable = new Set<string>();
  const stopCalls = kms.onCall((_call, outcome, status, error) => {
    if (status.state !== state) {
      state = status.state;
      if (status.state === 'ok') logger.info(`key provider ${status.keyId} answers again; the worker uses it as before`);
      else
        logger.warn(
          `key provider ${status.keyId} ${status.state}: ${status.reason ?? ''}; the worker keeps running on cached keys, and tasks that need a new or uncached key retry until it answers`,
        );
    }
    if (outcome !== 'revoked' && outcome !== 'destroyed') return;
    const which =
      error instanceof KeyVersionRevokedError ? `${error.keyName}@${error.version}` : error instanceof KeyDestroyedError ? `${error.keyName}` : outcome;
    if (namedUnreadable.has(which) || namedUnreadable.size >= MAX_NAMED_UNREADABLE_KEYS) return;
    namedUnreadable.add(which);
    logger.warn(
      `${error instanceof Error ? error.message : outcome}; the connections whose payloads it sealed cannot run on this worker, and aggregation_key_provider_calls{outcome="${outcome}"} counts the attempts (docs/operations.md, "Revocation" and "Forgetting a lender")`,
    );
  });
  const stopSealing = kms.onSealing((status) => {
    if (status.sealing === 'stopped')
      logger.error(`key provider ${status.keyId}: sealing stopped: ${status.sealingStoppedBecause ?? ''}; tasks retry until the KMS makes a data key`);
    else logger.info(`key provider ${status.keyId}: sealing goes on with a new data key`);
  });
  return () => {
    stopCalls();
    stopSealing();
  };
}

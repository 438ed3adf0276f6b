/**
 * The worker's watch over its payload keys: the key provider's (KMS) calls counted and its changes
 * logged, the static key's seals counted (with a warning past a limit), and the wait for a first
 * data key before the workers poll. Apart from src/worker.ts: everything it starts and stops about keys.
 */
import type { MetricMeter } from '@temporalio/common';
import { Runtime } from '@temporalio/worker';
import { keyProviderHealthOf, keySourceFor, staticSealingSourceOf } from '../codec/key-provider.js';
import type { KeyProviderHealth } from '../codec/key-provider-health.js';
import { recordKeyProviderMetrics } from '../metrics/key-provider-metrics.js';
import { recordStaticKeyUse } from '../metrics/static-key-metrics.js';
import type { WorkerConfig } from '../settings/worker.js';
import { logKeyProviderChanges } from './key-provider-log.js';
import { waitForFirstDataKey } from './key-provider-ready.js';

export interface KeyProviderWatch {
  /** The key provider's health, with a KMS; undefined otherwise. */
  readonly kms: KeyProviderHealth | undefined;
  /** Stops the counting and the logging. */
  stop(): void;
}

export function watchKeyProvider(config: WorkerConfig, meter: MetricMeter): KeyProviderWatch {
  const kms = keyProviderHealthOf(config.encryption);
  const stopKmsMetrics = kms ? recordKeyProviderMetrics(meter, kms) : undefined;
  const staticKey = staticSealingSourceOf(config.encryption);
  const warnInLog = (message: string) => {
    Runtime.instance().logger.warn(message);
  };
  const stopStaticKeyUse = staticKey ? recordStaticKeyUse(meter, staticKey, warnInLog) : undefined;
  const stopKmsLog = kms ? logKeyProviderChanges(kms, Runtime.instance().logger) : undefined;
  return {
    kms,
    stop: () => {
      stopKmsMetrics?.();
      stopStaticKeyUse?.();
      stopKmsLog?.();
    },
  };
}

/** A worker that cannot seal cannot complete a task: with a KMS, it has a data key before it polls. */
export async function untilFirstDataKey(config: WorkerConfig, kms: KeyProviderHealth | undefined): Promise<void> {
  if (!kms || !config.encryption) return;
  const logger = Runtime.instance().logger;
  await waitForFirstDataKey(keySourceFor(config.encryption), {
    warn: (message) => {
      logger.warn(message);
    },
    info: (message) => {
      logger.info(message);
    },
  });
}

/**
 * Why a worker could not answer for a workflow, when the reason is that its history cannot be read.
 *
 * A worker that cannot decode a history (its key version revoked, a payload not sealed) fails the
 * query it was asked; the failure's message travels sealed (encodeCommonAttributes) and the SDK's
 * client keeps only its placeholder: `QueryNotRegisteredError: Encoded failure`, which names nothing.
 * The same payloads are just as unreadable here (a revocation is the KMS's, for every process), so
 * the client decodes the start event's payloads with its own codecs and, if one is refused, that
 * refusal is the reason: a typed error with the key, its version or the payload's encoding.
 */
import { QueryNotRegisteredError, type Client } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { PayloadDecryptionError } from '../codec/payload-errors.js';

/** The payload error that keeps the workflow's history unreadable with this client's keys, or undefined if its start event reads. */
export async function unreadableHistoryError(client: Client, workflowId: string): Promise<PayloadDecryptionError | undefined> {
  let payloads: Payload[];
  try {
    const page = await client.workflowService.getWorkflowExecutionHistory({
      namespace: client.options.namespace,
      execution: { workflowId },
      maximumPageSize: 1,
    });
    const started = page.history?.events?.[0]?.workflowExecutionStartedEventAttributes;
    payloads = (started?.input?.payloads ?? []).map((payload) => ({ metadata: payload.metadata ?? {}, data: payload.data ?? new Uint8Array() }));
  } catch {
    // Nothing to add: the caller keeps the error it has.
    return undefined;
  }
  const codecs = [...client.options.loadedDataConverter.payloadCodecs].reverse();
  for (const payload of payloads) {
    try {
      let decoded = [payload];
      for (const codec of codecs) decoded = await codec.decode(decoded);
    } catch (error) {
      if (error instanceof PayloadDecryptionError) return error;
      // A KMS that cannot answer now says nothing about this history.
      return undefined;
    }
  }
  return undefined;
}

/**
 * For a query that failed: every query of this product is registered, so a QueryNotRegisteredError
 * means the worker could not run the workflow; the payload error when its history is why, else undefined.
 */
export async function unreadableQueryError(client: Client, workflowId: string, error: unknown): Promise<PayloadDecryptionError | undefined> {
  return error instanceof QueryNotRegisteredError ? unreadableHistoryError(client, workflowId) : undefined;
}

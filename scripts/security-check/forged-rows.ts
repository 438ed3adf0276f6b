/**
 * Rows forged in visibility, as anyone who may start workflows can put them there: a workflow
 * started raw (the SDK's default converter, no codec) under a tenant's search attributes, with a
 * long start delay so no worker runs it, and whatever memo the attack needs.
 */
import { randomUUID } from 'node:crypto';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { msToTs } from '../../src/sdk/internals.js';
import type { MessageTarget } from './attacks.js';

/** A search attribute's payload as the server takes it for a Keyword (a raw start carries them so). */
export function keywordAttribute(value: string) {
  const payload = defaultPayloadConverter.toPayload(value);
  return { ...payload, metadata: { ...payload.metadata, type: new TextEncoder().encode('Keyword') } };
}

export interface ForgedRow {
  readonly workflowId: string;
  readonly workflowType: string;
  /** Keyword search attributes by name. */
  readonly keywords: Readonly<Record<string, string>>;
  readonly memo: Record<string, Payload>;
  readonly input?: Payload[] | undefined;
}

/** Starts the row on the target's task queue, ten minutes delayed, by a forger's identity. */
export async function startForgedRow(target: MessageTarget, row: ForgedRow): Promise<void> {
  await target.raw.workflowService.startWorkflowExecution({
    namespace: target.raw.options.namespace,
    workflowId: row.workflowId,
    requestId: randomUUID(),
    workflowType: { name: row.workflowType },
    taskQueue: { name: target.taskQueue },
    ...(row.input ? { input: { payloads: row.input } } : {}),
    workflowStartDelay: msToTs(10 * 60_000),
    memo: { fields: row.memo },
    searchAttributes: { indexedFields: Object.fromEntries(Object.entries(row.keywords).map(([name, value]) => [name, keywordAttribute(value)])) },
    identity: 'security-check forger',
  });
}

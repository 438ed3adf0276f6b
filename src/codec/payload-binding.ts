/**
 * Where a sealed payload belongs, bound into its seal: the workflow id of the serialization context
 * the SDK hands the codec (and the tenant, read from it) become AES-GCM associated data, and are
 * written in clear beside it so a reader with no context (the codec endpoint) can still open it.
 * A payload copied from one connection into another is then refused by name before it is opened
 * (PayloadMisboundError), and one whose binding metadata was edited fails its tag.
 *
 * Layout (docs/payload-format.md, "The workflow binding"): metadata `encryption-binding` =
 * "workflow-v1" and `encryption-workflow-id` = the workflow id; associated data = for each of
 * ["workflow-v1", the `encryption-tenant` value or "", the workflow id], its UTF-8 length as 4
 * bytes big-endian, then its UTF-8 bytes. A payload without `encryption-binding` was sealed before
 * bindings (or with no workflow to bind to: a standalone activity, a Nexus handler's call): no
 * associated data, read as before unless the reader refuses unbound payloads.
 *
 * The SDK's context names the workflow, not the message: a signal's payload and an update's of the
 * same workflow carry the same binding. An answer is bound to its challenge set by its own
 * `challengeSetId`, which the workflow checks.
 */
import type { PayloadMetadata } from './payload-format.js';
import { metadataText, TENANT_METADATA_KEY } from './payload-format.js';
import { PayloadDecryptionError, PayloadMisboundError } from './payload-errors.js';

export const BINDING_METADATA_KEY = 'encryption-binding';
export const WORKFLOW_ID_METADATA_KEY = 'encryption-workflow-id';
export const WORKFLOW_BINDING = 'workflow-v1';

const encoder = new TextEncoder();

/** Temporal starts a schedule's workflow as `<action's workflow id>-<the nominal time, RFC 3339 to the second, UTC>`. */
const SCHEDULED_RUN_SUFFIX = /^-\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

/** The metadata a bound payload carries besides the key's (once per batch: one workflow). */
export function bindingMetadata(workflowId: string): Readonly<Record<string, Uint8Array>> {
  return Object.freeze({ [BINDING_METADATA_KEY]: encoder.encode(WORKFLOW_BINDING), [WORKFLOW_ID_METADATA_KEY]: encoder.encode(workflowId) });
}

/** The associated data of a payload bound to `workflowId`, sealed under `tenant`'s key (undefined: the product's). */
export function bindingAssociatedData(tenant: string | undefined, workflowId: string): Buffer {
  return Buffer.concat(
    [WORKFLOW_BINDING, tenant ?? '', workflowId].flatMap((field) => {
      const bytes = encoder.encode(field);
      const length = Buffer.alloc(4);
      length.writeUInt32BE(bytes.length);
      return [length, bytes];
    }),
  );
}

/** What a sealed payload says it is bound to: its workflow id, or undefined for an unbound payload; an unknown binding is refused by name. */
export function boundWorkflowId(metadata: PayloadMetadata, keyId: string | undefined): string | undefined {
  const binding = metadataText(metadata, BINDING_METADATA_KEY);
  if (binding === undefined) return undefined;
  if (binding !== WORKFLOW_BINDING) {
    throw new PayloadDecryptionError(
      keyId,
      `encrypted payload of ${BINDING_METADATA_KEY} "${binding.slice(0, 64)}", which this process does not read (it reads "${WORKFLOW_BINDING}")`,
    );
  }
  const workflowId = metadataText(metadata, WORKFLOW_ID_METADATA_KEY);
  if (workflowId === undefined) throw new PayloadDecryptionError(keyId, `${WORKFLOW_BINDING}-bound payload without ${WORKFLOW_ID_METADATA_KEY} metadata`);
  return workflowId;
}

/**
 * The associated data to open a payload with (undefined: unbound), after checking that it belongs to
 * `contextWorkflowId` (the workflow the SDK says it is read for; undefined: no context to check,
 * the codec endpoint's case). A schedule's run reads what its schedule's action was sealed for.
 */
export function openingAssociatedData(metadata: PayloadMetadata, keyId: string | undefined, contextWorkflowId: string | undefined): Buffer | undefined {
  const boundTo = boundWorkflowId(metadata, keyId);
  if (boundTo === undefined) return undefined;
  if (contextWorkflowId !== undefined && !belongsTo(boundTo, contextWorkflowId)) throw new PayloadMisboundError(keyId, boundTo, contextWorkflowId);
  return bindingAssociatedData(metadataText(metadata, TENANT_METADATA_KEY), boundTo);
}

function belongsTo(boundTo: string, workflowId: string): boolean {
  return workflowId === boundTo || (workflowId.startsWith(boundTo) && SCHEDULED_RUN_SUFFIX.test(workflowId.slice(boundTo.length)));
}

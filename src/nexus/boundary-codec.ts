/**
 * The codec of the worker that serves the `connections` Nexus service for one endpoint: two keys, each
 * for its own side of the boundary.
 *
 * Why the Nexus worker needs the caller's key: in TypeScript SDK 1.24 a caller's worker runs its
 * codec over a Nexus operation's input like any payload of its workflow (the codec is given the
 * calling workflow's serialization context; nothing says "this one leaves the namespace"), and the
 * handler's worker decodes that input with its own data converter. And an asynchronous operation's
 * result is the bytes of its backing workflow's result, delivered as they are to the caller, whose
 * codec must open them. So whatever crosses the boundary is sealed under a key the caller's converter
 * opens: the caller's own (its "boundary key", given to the product for its endpoint only). The
 * product's keys never leave the product: the caller needs none of them.
 *
 * - Sealed under the boundary key: Nexus task inputs and outputs (no serialization context) and the
 *   payloads of the relay workflow (`nexus-relay-…`), whose result is what `start` delivers.
 * - Sealed under the product's codec (its per-tenant keys): everything of the product's own workflows
 *   (the connection the relay starts as a child, its input and what it returns to the relay).
 * - Decoded by whichever side's key id the payload names.
 * The boundary's payloads are bound to no workflow: the caller's workflow that reads the result is
 * not the relay that sealed it. The product's are bound to their own workflows as everywhere.
 */
import type { Payload, PayloadCodec, SerializationContext } from '@temporalio/common';
import { KEY_ID_METADATA_KEY, metadataText } from '../codec/payload-format.js';
import { NEXUS_RELAY_WORKFLOW_ID_PREFIX } from './relay-ids.js';

export interface BoundaryCodecOptions {
  /** The codec of the caller's side: seals under the caller's boundary key. */
  readonly boundary: PayloadCodec;
  /** Key ids the boundary codec opens (its sealing key's and any it still decrypts). */
  readonly boundaryKeyIds: readonly string[];
  /** The product's codec (per-tenant keys), for the product's own workflows. */
  readonly product: PayloadCodec;
}

/** Whether a payload of this context crosses (or is the source of what crosses) the boundary. */
export function crossesBoundary(context: SerializationContext | undefined): boolean {
  if (context === undefined) return true;
  return context.type === 'workflow' && context.workflowId.startsWith(NEXUS_RELAY_WORKFLOW_ID_PREFIX);
}

export class BoundaryCodec implements PayloadCodec {
  constructor(private readonly options: BoundaryCodecOptions) {}

  encode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    // What crosses is read by a caller's workflow in another namespace, whose id the relay never
    // knows: sealed with no context, so it is bound to no workflow (docs/payload-format.md#the-workflow-binding).
    return crossesBoundary(context) ? this.options.boundary.encode(payloads) : this.options.product.encode(payloads, context);
  }

  async decode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    const decoded: Payload[] = [];
    for (const payload of payloads) {
      const keyId = metadataText(payload.metadata, KEY_ID_METADATA_KEY);
      const boundary = keyId !== undefined ? this.options.boundaryKeyIds.includes(keyId) : crossesBoundary(context);
      const [one] = await (boundary ? this.options.boundary : this.options.product).decode([payload], context);
      if (one === undefined) throw new Error('codec returned no payload');
      decoded.push(one);
    }
    return decoded;
  }
}

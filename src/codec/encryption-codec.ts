/**
 * A Temporal PayloadCodec that encrypts every payload with AES-256-GCM before it leaves the process,
 * so Temporal's history holds ciphertext instead of bank passwords, MFA answers, holder PII and
 * transactions. It runs where payloads cross the wire (worker, client, codec endpoint), never inside
 * workflow code.
 *
 * The wire format (payload-format.ts, docs/payload-format.md): the static format names a configured
 * key by id; envelope-v1 carries its data key wrapped by a KMS (key-provider.ts chooses). Its keys
 * come from a KeySource (key-source.ts): configured keys, or a KMS's data keys, cached.
 *
 * Decoding refuses a payload that is not sealed (PayloadNotSealedError): anyone who can call Temporal
 * could otherwise write an answer or an input the worker would trust. Only a replay may read one
 * (option `readUnsealedForReplay`: histories written before encryption was turned on still replay);
 * a running process never does. It decrypts with the key named by the payload, so earlier keys kept
 * as decryption keys keep their histories readable after a rotation.
 * A payload sealed with one tenant's key in another tenant's workflow is refused too
 * (PayloadDecryptionError): a tenant's key writes into its own work only.
 *
 * A worker's codec marks, rather than refuses, a workflow's message it cannot decrypt (option
 * `markUndecodableMessages`): a signal encrypted under a key nobody has must not fail every workflow
 * task of its connection. Activity payloads are still refused, so a worker missing a key retries
 * until the key is configured. A key provider that cannot answer now is never marked: its error
 * fails the task, which retries (a marked message would be refused for good). Nor is a revoked key
 * version or a destroyed key: either makes the whole history unreadable (its start input first), so the workflow
 * task fails visibly, naming the version, and goes on if the minimum is lowered again; a marked
 * start input would fail the connection for good instead.
 */
import type { Payload, PayloadCodec, SerializationContext } from '@temporalio/common';
import { tenantOfWorkflowId } from '../contract/workflow-tenant.js';
import { UNDECODABLE_ENCODING, UNDECODABLE_REASON_METADATA_KEY } from './undecodable.js';
import { StaticKeySource, type EncryptionKeys, type KeySource } from './key-source.js';
import { StaticTenantKeySource } from './static-tenant-keys.js';
import { KeyDestroyedError, KeyVersionRevokedError, PayloadDecryptionError, PayloadNotSealedError, PayloadUnboundError } from './payload-errors.js';
import { bindingAssociatedData, bindingMetadata, openingAssociatedData } from './payload-binding.js';
import {
  ENCODING_METADATA_KEY,
  isEncrypted,
  KEY_ID_METADATA_KEY,
  metadataText,
  NoncePool,
  openPayload,
  sealingTenant,
  sealPayload,
  TENANT_METADATA_KEY,
} from './payload-format.js';

export { ENCRYPTED_ENCODING, KEY_ID_METADATA_KEY, isEncrypted } from './payload-format.js';
export { PayloadDecryptionError, PayloadMisboundError, PayloadNotSealedError, PayloadUnboundError, UnknownEncryptionKeyError } from './payload-errors.js';
export type { EncryptionKeys } from './key-source.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export interface EncryptionCodecOptions {
  /** Workers: a workflow-owned payload (signal, update, start input) that cannot be decrypted becomes a marker. */
  readonly markUndecodableMessages?: boolean | undefined;
  /** Replays only (replayDataConverterFor): an unsealed payload of a history written before encryption is read as it is. */
  readonly readUnsealedForReplay?: boolean | undefined;
  /**
   * PAYLOAD_UNBOUND=refuse: a sealed payload bound to no workflow, read for a workflow, is refused
   * (PayloadUnboundError) instead of read as before bindings. Never for a replay.
   */
  readonly refuseUnbound?: boolean | undefined;
}

export class EncryptionCodec implements PayloadCodec {
  private readonly keys: KeySource;
  private readonly nonces = new NoncePool();
  private readonly markUndecodableMessages: boolean;
  private readonly readUnsealedForReplay: boolean;
  private readonly refuseUnbound: boolean;

  /** Configured keys (the static format), or a key source such as a KMS's (envelope-v1). */
  constructor(
    keys: EncryptionKeys | KeySource,
    { markUndecodableMessages = false, readUnsealedForReplay = false, refuseUnbound = false }: EncryptionCodecOptions = {},
  ) {
    this.keys = 'sealingKey' in keys ? keys : new StaticKeySource(keys);
    this.markUndecodableMessages = markUndecodableMessages;
    this.readUnsealedForReplay = readUnsealedForReplay;
    this.refuseUnbound = refuseUnbound && !readUnsealedForReplay;
  }

  /** The id new payloads are encrypted under. */
  get keyId(): string {
    return this.keys.keyId;
  }

  /** The ids of every configured key this codec can decrypt with (the current one first); a KMS's keys are the KMS's. */
  get keyIds(): string[] {
    return this.keys instanceof StaticKeySource || this.keys instanceof StaticTenantKeySource ? this.keys.keyIds : [this.keys.keyId];
  }

  /**
   * One key for the whole batch: a KMS is asked at most once per batch, and only when its data key is
   * spent. The batch's tenant is its workflow's (the serialization context's workflow id): with keys
   * per tenant, its key seals the batch. A batch of a workflow is bound to it (payload-binding.ts).
   */
  async encode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    if (payloads.length === 0) return [];
    const tenant = tenantOfContext(context);
    const sealing = await this.keys.sealingKey(payloads.length, tenant);
    const workflowId = context?.workflowId;
    if (workflowId === undefined) {
      // A metadata object of its own per payload (the values are shared): later stages may add to it.
      return payloads.map((payload) => ({ metadata: { ...sealing.metadata }, data: sealPayload(sealing.key, this.nonces.take(), payload) }));
    }
    const binding = bindingMetadata(workflowId);
    // The tenant bound is the key's (`encryption-tenant`, absent for the product's key), as a reader reads it.
    const associatedData = bindingAssociatedData(metadataText(sealing.metadata, TENANT_METADATA_KEY), workflowId);
    return payloads.map((payload) => ({
      metadata: { ...sealing.metadata, ...binding },
      data: sealPayload(sealing.key, this.nonces.take(), payload, associatedData),
    }));
  }

  /**
   * A payload it cannot decrypt rejects the whole batch (the worker's task fails and retries, a client
   * call fails), except a workflow's message on a worker that marks them.
   */
  decode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    const mark = this.markUndecodableMessages && context?.type === 'workflow';
    const tenant = tenantOfContext(context);
    const workflowId = context?.workflowId;
    return Promise.all(payloads.map((payload) => (mark ? this.decryptOrMark(payload, tenant, workflowId) : this.decrypt(payload, tenant, workflowId))));
  }

  private async decryptOrMark(payload: Payload, tenant: string | undefined, workflowId: string | undefined): Promise<Payload> {
    try {
      return await this.decrypt(payload, tenant, workflowId);
    } catch (error) {
      if (!(error instanceof PayloadDecryptionError) || error instanceof KeyVersionRevokedError || error instanceof KeyDestroyedError) throw error;
      return {
        metadata: { [ENCODING_METADATA_KEY]: encoder.encode(UNDECODABLE_ENCODING), [UNDECODABLE_REASON_METADATA_KEY]: encoder.encode(error.message) },
        data: new Uint8Array(),
      };
    }
  }

  /** `tenant`, `workflowId`: the tenant and workflow the payload is read for, when the SDK says which. */
  private async decrypt(payload: Payload, tenant: string | undefined, workflowId: string | undefined): Promise<Payload> {
    if (!isEncrypted(payload)) {
      if (this.readUnsealedForReplay) return payload;
      const encoding = payload.metadata?.[ENCODING_METADATA_KEY];
      throw new PayloadNotSealedError(encoding ? decoder.decode(encoding).slice(0, 64) : '(none)');
    }
    // A tenant's key writes into its own work only: whoever holds lender A's key (its own tools) cannot
    // answer, or feed inputs to, lender B's connections. A payload of the product's key names no tenant.
    const keyIdText = metadataText(payload.metadata, KEY_ID_METADATA_KEY);
    const sealedFor = sealingTenant(payload.metadata, keyIdText);
    if (sealedFor !== undefined && tenant !== undefined && sealedFor !== tenant) {
      throw new PayloadDecryptionError(
        keyIdText,
        `payload sealed for tenant "${sealedFor}" in a workflow of tenant "${tenant}": a tenant's key writes into its own work only, so it is refused`,
      );
    }
    // Another workflow's payload is refused before any key is asked for: copied, not sent.
    const associatedData = openingAssociatedData(payload.metadata, keyIdText, workflowId);
    if (associatedData === undefined && this.refuseUnbound && workflowId !== undefined) throw new PayloadUnboundError(keyIdText, workflowId);
    const { key, keyId } = await this.keys.openingKey(payload.metadata);
    return openPayload(key, keyId, payload.data ?? new Uint8Array(), associatedData);
  }
}

/** The tenant whose work a batch belongs to: its workflow's, read from the workflow id; undefined for no workflow or no tenant. */
function tenantOfContext(context: SerializationContext | undefined): string | undefined {
  const workflowId = context?.workflowId;
  return workflowId === undefined ? undefined : tenantOfWorkflowId(workflowId);
}

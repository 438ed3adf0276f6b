/**
 * What every payload store driver offers beyond the SDK's StorageDriver: deleting one connection's
 * payloads by workflow id (what "forget a login" builds on), and releasing its resources.
 */
import type { StorageDriver } from '@temporalio/common';

export interface DeleteWorkflowPayloadsOptions {
  /** Only this namespace; by default every namespace found in the store. */
  readonly namespace?: string | undefined;
  readonly abortSignal?: AbortSignal | undefined;
}

export interface PayloadStoreDriver extends StorageDriver {
  /** Where the payloads live, for messages: a directory, or s3://bucket/prefix. */
  readonly location: string;
  /**
   * Deletes every payload stored for `workflowId` (all its runs and activities) and returns how many
   * objects were removed. Deleting what is not there is not an error (it returns 0).
   */
  deleteWorkflowPayloads(workflowId: string, options?: DeleteWorkflowPayloadsOptions): Promise<number>;
  /** Releases connections or handles; the driver is unusable afterwards. */
  close(): void;
}

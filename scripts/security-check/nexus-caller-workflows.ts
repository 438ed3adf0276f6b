/**
 * security:check's lender caller of the `connections` Nexus service (src/contract/nexus-connections.ts):
 * a workflow in the lender's own namespace trying operations through an endpoint and reporting what
 * each answered. Bundled by the caller's worker of scripts/security-check/nexus-attacks.ts (no codec:
 * the attack is on the handler's tenant check, not on the boundary key). Deterministic code only.
 */
import { NexusOperationFailure } from '@temporalio/common';
import { createNexusServiceClient } from '@temporalio/workflow';
import { HandlerError } from 'nexus-rpc';
import { connectionsNexusService } from '../../src/contract/nexus-connections.js';

export interface NexusTry {
  readonly endpoint: string;
  readonly operation: 'start' | 'answer' | 'state' | 'refreshBook';
  readonly input: unknown;
}

/** A handler error's type (`UNAUTHORIZED`, ...), or `answered` / `other` for anything else, with its message. */
export interface NexusTryOutcome {
  readonly type: string;
  readonly message: string;
}

/** Tries each operation in turn; what each answered. */
export async function nexusCallerTries(tries: readonly NexusTry[]): Promise<NexusTryOutcome[]> {
  const outcomes: NexusTryOutcome[] = [];
  for (const { endpoint, operation, input } of tries) {
    const nexus = createNexusServiceClient({ endpoint, service: connectionsNexusService });
    try {
      // The input is deliberately the attacker's (another tenant named), whatever its type.
      const answered: unknown = await nexus.executeOperation(operation, input as never, { scheduleToCloseTimeout: '30 seconds' });
      outcomes.push({ type: 'answered', message: JSON.stringify(answered ?? null).slice(0, 160) });
    } catch (error) {
      if (error instanceof NexusOperationFailure && error.cause instanceof HandlerError)
        outcomes.push({ type: error.cause.type, message: error.cause.message });
      else outcomes.push({ type: 'other', message: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
    }
  }
  return outcomes;
}

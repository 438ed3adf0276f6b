/**
 * Validation of a connection's input, run as the workflow's first (local) activity, not in the
 * workflow:
 * - its result is recorded in history, so a replay sees the input as it was normalized then, even
 *   after the schema or its defaults change;
 * - zod cannot run in the workflow sandbox as it is shared: the SDK deep-freezes the modules every
 *   workflow of a thread shares (src/bundle/workflow-code.ts), and a frozen zod schema fails to parse
 *   ("Cannot define property parse, object is not extensible").
 */
import { ApplicationFailure } from '@temporalio/common';
import { parseOrRefuse } from '../validation/parse-or-refuse.js';
import { ConnectionInput } from '../contract/connection/connection-input.js';
import { isUndecodablePayload } from '../contract/undecodable-payload.js';
import { callbackRequestRefusal, NO_CALLBACKS, type CallbackSettings } from '../callbacks/callback-policy.js';

/** `callbacks`: the worker's CALLBACK_* settings (a callback outside them is refused here too). */
export function createInputActivities(callbacks: CallbackSettings = NO_CALLBACKS) {
  return {
    /** Parses the raw input (defaults applied) or fails, non-retryably, naming each bad field. */
    // Async: activities return promises, and the worker awaits it like any other.
    // eslint-disable-next-line @typescript-eslint/require-await
    async validateConnectionInput(args: unknown): Promise<ConnectionInput> {
      // An input the worker could not decrypt reaches here as a marker (src/codec/encryption-codec.ts):
      // say that, and which key, rather than list every field as missing.
      if (isUndecodablePayload(args)) {
        throw ApplicationFailure.create({
          type: 'InvalidConnectionInput',
          message: `invalid connection input: cannot decrypt it: ${args.undecodablePayload}`,
          nonRetryable: true,
        });
      }
      const input = parseOrRefuse(ConnectionInput, args, (problem) =>
        ApplicationFailure.create({ type: 'InvalidConnectionInput', message: `invalid connection input: ${problem}`, nonRetryable: true }),
      );
      const refusal = callbackRequestRefusal(callbacks, input.customerId, input.callback);
      if (refusal !== undefined) {
        throw ApplicationFailure.create({
          type: 'InvalidConnectionInput',
          message: `invalid connection input: callback.${refusal.field}: ${refusal.problem}`,
          nonRetryable: true,
        });
      }
      return input;
    },
  };
}

export type InputActivities = ReturnType<typeof createInputActivities>;

/**
 * The inputs of the `connections` Nexus service's operations (src/contract/nexus-connections.ts) as
 * the handler checks them, each problem named by its field (BAD_REQUEST). Kept apart from the
 * contract, which callers bundle into their workflows: these need zod and the product's input rules.
 * The Python caller's models can be generated from them (z.toJSONSchema, io "input").
 */
import { z } from 'zod';
import { SecurityResponses } from '../aggregator/schemas.js';
import { ConnectionInput } from '../contract/connection/connection-input.js';
import { DEFAULT_BOOK_CADENCE } from '../contract/book/book-definitions.js';
import { KeySegment } from '../client/business-key.js';
import { BookPageSize, CadenceName, WindowBoundsInput } from '../client/book-input.js';

/** `state`'s input, and what `answer` adds to. */
export const NexusConnectionRefSchema = z.strictObject({ applicationId: KeySegment, customerId: z.string().optional() });

/** `start`'s input as it arrives: the connection's own fields are checked once the tenant is settled (NexusParsedStartSchema). */
export const NexusStartInputSchema = z.strictObject({ applicationId: KeySegment, connection: z.record(z.string(), z.unknown()) });
/** `start`'s input with the endpoint's tenant as the connection's customer id. */
export const NexusParsedStartSchema = z.strictObject({ applicationId: KeySegment, connection: ConnectionInput });

export const NexusAnswerInputSchema = NexusConnectionRefSchema.extend({
  answer: z.strictObject({ challengeSetId: z.string().min(1, { message: 'must not be empty' }), responses: SecurityResponses }),
});

export const NexusRefreshBookInputSchema = z.strictObject({
  cadence: CadenceName.default(DEFAULT_BOOK_CADENCE),
  customerId: z.string().optional(),
  window: WindowBoundsInput.optional(),
  pageSize: BookPageSize.optional(),
});

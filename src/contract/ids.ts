/**
 * The rules for the names the product builds workflow ids from, written once: a customer id or an
 * application id (an id segment) and a book's cadence. The client, the CLI, the settings' per-tenant
 * lists and the workflows' own input checks all read them here. Import-free: bundled with the workflows.
 *
 * The service and the codec's tenant keys accept more (any of `A-Za-z0-9._-`, up to 128: sandbox/,
 * src/contract/workflow-tenant.ts); the product asks less of what it names, so that every id it makes
 * is one they take.
 */

/** An id segment: a letter or digit, then letters, digits, ".", "_", "-"; at most 64 in all. */
export const ID_SEGMENT_MAX = 64;
/** Unanchored, for patterns that hold a segment (`connection-<customerId>:<applicationId>`, `<customerId>:<days>`). */
export const ID_SEGMENT_SOURCE = `[A-Za-z0-9][A-Za-z0-9._-]{0,${ID_SEGMENT_MAX - 1}}`;
export const ID_SEGMENT_PATTERN = new RegExp(`^${ID_SEGMENT_SOURCE}$`);
export const ID_SEGMENT_RULE = `must start with a letter or digit and use only letters, digits, ".", "_" and "-" (at most ${ID_SEGMENT_MAX})`;

/** A UUID (a LoginId, a Temporal run id), any case. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A book's cadence (`nightly`, `weekly`, `hourly-eu`): one Schedule per name and tenant. */
export const CADENCE_PATTERN = /^[a-z0-9][a-z0-9-]{0,39}$/;
export const CADENCE_RULE = 'must be lower-case letters, digits and "-" (at most 40), such as nightly';

/**
 * What goes into and comes out of the connection activities (connection-activities.ts), as plain
 * serializable types: the poll activities repeat the same calls, and the workflows read the outcomes.
 */
import type { DataWarning } from '../aggregator/data-reader.js';
import type { AccountsDetailOptions, Login, SecurityChallenge, SecurityResponses } from '../aggregator/schemas.js';
import type { AttributesProduct, SessionInput } from '../contract/connection/connection-input.js';

export type AuthorizeOutcome =
  | { readonly kind: 'session-open'; readonly requestId: string; readonly login: Login; readonly institution?: string | undefined }
  | { readonly kind: 'challenge'; readonly requestId: string; readonly challenges: SecurityChallenge[] }
  | { readonly kind: 'pending'; readonly requestId: string; readonly code: string; readonly message: string };

export type DataOutcome<T> =
  /** `warnings`: fields of the data kept as sent that its view could not read (absent when none). */
  | { readonly kind: 'ready'; readonly requestId: string; readonly data: T; readonly warnings?: readonly DataWarning[] | undefined }
  | { readonly kind: 'pending'; readonly requestId: string; readonly code: string; readonly message: string };

interface Tenant {
  readonly customerId: string;
}

export interface OpenSessionInput extends Tenant {
  readonly session: SessionInput;
}
export interface AnswerChallengeInput extends Tenant {
  readonly requestId: string;
  readonly responses: SecurityResponses;
}
export interface AccountsDetailInput extends Tenant {
  readonly requestId: string;
  readonly options: AccountsDetailOptions;
}
export interface SessionDataInput extends Tenant {
  readonly requestId: string;
}
export interface LoginDataInput extends Tenant {
  readonly loginId: string;
  readonly requestId: string;
  /** Set when the call repeats a request that answered 202: poll #n of it (counted in aggregation_polls). */
  readonly pollNumber?: number | undefined;
}
export interface AttributesInput extends LoginDataInput {
  readonly product: AttributesProduct;
}

/**
 * Reading a data answer (accounts, investments, attributes, statements) the way an integrator who
 * has lived through a provider's schema change reads it: strict about what the product acts on,
 * tolerant of what it passes through.
 *
 * - The *envelope* (the status, `RequestId`, the `LoginId`, that the records are a list) drives the
 *   connection: an answer that breaks it cannot be used, and the client throws
 *   UnexpectedResponseError at once (the service answered; asking again gets the same answer).
 * - The *view* (schemas.ts) types every record. A record that breaks even the tolerant view is kept
 *   exactly as the service sent it, and each problem becomes a DataWarning the lender reads beside
 *   the data, instead of the whole connection failing over one field.
 */
import { z } from 'zod';
import { AttributesEnvelope, AttributesResponse, attributesResult, isPlainObject, readAttributeGroups, Uuid, type Login } from './schemas.js';
import { describeIssues, issuePath } from '../validation/parse-or-refuse.js';

/** One field of passed-through data the view could not read; the record is kept as sent. */
export interface DataWarning {
  /** The service operation that answered, e.g. "GetAccountsDetailAsync". */
  readonly operation: string;
  /** Where in the answer, e.g. `Accounts[0].Transactions[3].Date`; empty for the answer as a whole. */
  readonly path: string;
  /** What the view expected, in words; never the value (it may be an applicant's data). */
  readonly problem: string;
}

/** Warnings listed for one answer; past this the last one counts the rest, so a result stays small. */
export const MAX_DATA_WARNINGS = 20;

export interface DataReading<T> {
  readonly data: T;
  readonly warnings: readonly DataWarning[];
}

export interface DataReader<T> {
  /** What the product acts on: must hold, or the answer is unusable. */
  readonly envelope: z.ZodType;
  /** The typed view of the whole answer. */
  readonly view: z.ZodType<T>;
  /** The answer as sent, in the shape the view gives, for when the view fails (default: the body itself). */
  readonly asSent?: (body: Record<string, unknown>) => T;
}

/** An answer read: its data (with the view's warnings), or why what the product acts on does not hold. */
export type AnswerReading<T> = ({ readonly usable: true } & DataReading<T>) | { readonly usable: false; readonly problems: string };

/**
 * Reads an answer: the envelope must hold; then the view's data, or the data as sent with its
 * warnings. A reader whose view is its envelope (an Authorize: everything in it is acted on) is
 * parsed once.
 */
export function readAnswer<T>(reader: DataReader<T>, body: Record<string, unknown>, operation: string): AnswerReading<T> {
  const envelope = reader.envelope.safeParse(body);
  if (!envelope.success) return { usable: false, problems: describeIssues(envelope.error) };
  if (reader.view === reader.envelope) return { usable: true, data: envelope.data as T, warnings: [] };
  const parsed = reader.view.safeParse(body);
  if (parsed.success) return { usable: true, data: parsed.data, warnings: [] };
  const data = reader.asSent ? reader.asSent(body) : (body as T);
  return { usable: true, data, warnings: warningsOf(parsed.error.issues, operation) };
}

function warningsOf(issues: readonly z.core.$ZodIssue[], operation: string): DataWarning[] {
  const warnings = issues.slice(0, MAX_DATA_WARNINGS).map((issue) => ({ operation, path: issuePath(issue.path), problem: issue.message }));
  if (issues.length > MAX_DATA_WARNINGS) {
    const rest = issues.length - MAX_DATA_WARNINGS + 1;
    warnings[MAX_DATA_WARNINGS - 1] = { operation, path: '', problem: `${rest} more fields could not be read (first ${MAX_DATA_WARNINGS - 1} listed)` };
  }
  return warnings;
}

// ---------------------------------------------------------------------------------------------
// The envelopes

const LoginEnvelope = z.looseObject({ Id: Uuid });
const Records = z.array(z.looseObject({}), { message: 'must be a list of records' });
/** The body may leave its HttpStatusCode out (the HTTP status says 200); if it has one, it says 200. */
const Ok = z.literal(200).optional();

export const AccountsEnvelope = z.looseObject({ HttpStatusCode: Ok, RequestId: Uuid, Login: LoginEnvelope, Accounts: Records });
export const InvestmentsEnvelope = z.looseObject({ HttpStatusCode: Ok, RequestId: Uuid, Login: LoginEnvelope, Accounts: Records });
export const StatementsEnvelope = z.looseObject({ HttpStatusCode: Ok, RequestId: Uuid, StatementsByAccount: Records });
export const DeleteCardEnvelope = z.looseObject({ HttpStatusCode: Ok });

/** Attributes as sent: every object member a group (with the spec's spelling of AttributesDetail), the rest `Other`. */
function attributesAsSent(body: Record<string, unknown>): z.infer<typeof AttributesResponse> {
  const { groups, other } = readAttributeGroups(body);
  const login = (isPlainObject(body.Login) ? body.Login : {}) as Login;
  return attributesResult(login, String(body.RequestId), groups, other);
}

export function attributesReader(): DataReader<z.infer<typeof AttributesResponse>> {
  return { envelope: AttributesEnvelope, view: AttributesResponse, asSent: attributesAsSent };
}

/** Shared by the console and the pipeline entry: nothing is done that the audit trail cannot record. */
import { AuditUnavailableError } from '../audit/audit-store.js';
import { HttpError } from './json-http.js';

/** Runs an audit write; a store that cannot record refuses the request (503) rather than let it act unrecorded. */
export async function auditOrRefuse<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (error instanceof AuditUnavailableError) throw new HttpError(503, 'AuditUnavailable', `${error.message}: nothing was done, as nothing can be recorded`);
    throw error;
  }
}

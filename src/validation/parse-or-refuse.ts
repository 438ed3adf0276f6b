/**
 * Input checked against a zod schema, refused the one way every way in refuses it: each offending
 * field named by its path, in the caller's own typed error (an HTTP 400, a Nexus BAD_REQUEST, a
 * client's Invalid*Error, a non-retryable activity failure).
 */
import type { z } from 'zod';

/** The value the schema makes of `value`, or `refuse(problem, cause)` thrown, `problem` naming every field. */
export function parseOrRefuse<S extends z.ZodType>(schema: S, value: unknown, refuse: (problem: string, cause: z.ZodError) => Error): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw refuse(describeIssues(parsed.error), parsed.error);
  return parsed.data;
}

/** "Accounts[0].Balance.Current: expected number, received string; ..." */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => (issue.path.length ? `${issuePath(issue.path)}: ${issue.message}` : issue.message)).join('; ');
}

/** `Accounts[0].Transactions[3].Date`: an issue's path as a reader writes it. */
export function issuePath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((text, key) => (typeof key === 'number' ? `${text}[${key}]` : text ? `${text}.${String(key)}` : String(key)), '');
}

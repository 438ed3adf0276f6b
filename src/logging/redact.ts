/**
 * Belt and braces for logs: whatever a log call is handed, values under secret-bearing keys
 * (passwords, MFA answers, tokens, holder identity, the excerpt of a service reply the product could
 * not use, which may echo an applicant's data) never reach the output, however deep they sit.
 * A structure deeper than MAX_DEPTH is cut there rather than passed on unread, and a cycle is named
 * rather than followed.
 */
const SECRET_KEY = /pass(word)?|secret|token|api[-_]?key|authorization|securityresponses|responses|answers?|holder|email|phone|excerpt/i;
/** Far deeper than any log entry of ours; a deeper one is cut, never passed on unread. */
const MAX_DEPTH = 64;

export function redact(value: unknown): unknown {
  return redactWithin(value, 0, new WeakSet());
}

/** `ancestors`: the objects on the path from the root to here, to tell a cycle from a shared value. */
function redactWithin(value: unknown, depth: number, ancestors: WeakSet<object>): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return '[redacted: nested too deep]';
  if (ancestors.has(value)) return '[circular]';
  ancestors.add(value);
  try {
    if (Array.isArray(value)) return value.map((item) => redactWithin(item, depth + 1, ancestors));
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([key, item]) => [
        key,
        SECRET_KEY.test(key) ? '[redacted]' : redactWithin(item, depth + 1, ancestors),
      ]),
    );
  } finally {
    ancestors.delete(value);
  }
}

/**
 * Belt and braces for logs: whatever a log call is handed, values under secret-bearing keys
 * (passwords, MFA answers, tokens, holder identity) never reach the output.
 */
const SECRET_KEY = /pass(word)?|secret|token|api[-_]?key|authorization|securityresponses|responses|answers?|holder|email|phone/i;

export function redact(value: unknown, depth = 0): unknown {
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([key, item]) => [key, SECRET_KEY.test(key) ? '[redacted]' : redact(item, depth + 1)]),
  );
}

/**
 * The fields of this product's payloads that hold an applicant's credentials, and how a person is
 * shown them: that they were given, never what they are. Only the Authorize activity needs the
 * password and the answers' values (the worker decodes them in process); a person reading a payload
 * through the codec endpoint (the Web UI, `temporal --codec-endpoint`) gets them redacted, whatever
 * their role (docs/threat-model.md).
 *
 * Credentials are found by field name, wherever they sit in a payload: a connection's input
 * (`session.password`), an answer (`responses`: prompt → answers), the Authorize activity's input, the
 * service's own spelling (`Password`, `SecurityResponses`), a book's or a Nexus caller's copy of them.
 */

/** What a redacted value reads as. */
export const REDACTED = '[given; redacted]';

/** Fields whose value is a secret as a whole (compared lower-case). */
const SECRET_FIELDS = new Set(['password', 'connection_password', 'passcode', 'pin']);
/** Fields holding prompts → answers: the prompts stay (they say what was asked), the answers are redacted. */
const ANSWER_FIELDS = new Set(['responses', 'securityresponses']);

export interface Redaction<T> {
  readonly value: T;
  /** How many values were redacted. */
  readonly redacted: number;
}

/** `value` with every credential in it redacted (a new value; `value` is left as it is). */
export function redactCredentials(value: unknown): Redaction<unknown> {
  let redacted = 0;
  const walk = (node: unknown, depth: number): unknown => {
    if (node === null || typeof node !== 'object') return node;
    // Payloads are JSON: no cycles. Deeper than any payload of ours nests: withheld whole (fail closed), never walked further.
    if (depth > 64) {
      redacted += 1;
      return REDACTED;
    }
    if (Array.isArray(node)) return node.map((item) => walk(item, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(node as Record<string, unknown>)) {
      const name = key.toLowerCase();
      if (SECRET_FIELDS.has(name) && child !== null && child !== undefined) {
        redacted += 1;
        out[key] = REDACTED;
      } else if (ANSWER_FIELDS.has(name) && child !== null && typeof child === 'object' && !Array.isArray(child)) {
        out[key] = Object.fromEntries(
          Object.entries(child as Record<string, unknown>).map(([prompt, answers]) => {
            redacted += 1;
            return [prompt, Array.isArray(answers) ? (answers as unknown[]).map(() => REDACTED) : REDACTED];
          }),
        );
      } else {
        out[key] = walk(child, depth + 1);
      }
    }
    return out;
  };
  const result = walk(value, 0);
  return { value: result, redacted };
}

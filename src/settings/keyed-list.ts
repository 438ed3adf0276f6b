/**
 * Settings that map keys to values, `<key>=<value>,<key>=<value>` (an endpoint to its tenant or key
 * file, a tenant to its secrets or pipeline keys): blanks skipped, each entry checked, a key listed
 * twice refused. Each setting says what its keys and values look like and how it words a refusal.
 */
import { z } from 'zod';

export interface KeyedListRules<T> {
  /** Regular-expression source of a key and of a value (anchored here). */
  readonly keySource: string;
  readonly valueSource: string;
  /** Why an entry that does not match is refused: `"<entry>": <rule>`. */
  readonly rule: string;
  /** What a key listed twice is told. */
  readonly twice: (key: string) => string;
  /** Why a key is refused though it matches (a reserved tenant), if it is. */
  readonly keyProblem?: ((key: string) => string | undefined) | undefined;
  readonly read: (value: string) => T;
}

export function keyedList<T>({ keySource, valueSource, rule, twice, keyProblem, read }: KeyedListRules<T>) {
  const entryPattern = new RegExp(`^(${keySource})=(${valueSource})$`);
  return z.string().transform((text, ctx) => {
    const values = new Map<string, T>();
    for (const raw of text.split(',')) {
      const entry = raw.trim();
      if (entry === '') continue;
      const [, key, value] = entryPattern.exec(entry) ?? [];
      const problem = key === undefined ? undefined : keyProblem?.(key);
      if (key === undefined || value === undefined) ctx.addIssue({ code: 'custom', message: `${JSON.stringify(entry)}: ${rule}` });
      else if (problem !== undefined) ctx.addIssue({ code: 'custom', message: `${key}: ${problem}` });
      else if (values.has(key)) ctx.addIssue({ code: 'custom', message: twice(key) });
      else values.set(key, read(value));
    }
    return values;
  });
}

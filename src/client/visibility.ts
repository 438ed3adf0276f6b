/** Visibility query literals, shared by every list the client makes. */
import { InvalidConnectionInputError } from './errors.js';

/** A double-quoted visibility string literal: backslashes and quotes escaped, control characters refused. */
export function quoteVisibilityValue(value: string): string {
  // Control characters cannot be part of a Keyword value anyone set; refusing them keeps the query one line.
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value)) throw new InvalidConnectionInputError(`list filter value ${JSON.stringify(value)} contains control characters`);
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

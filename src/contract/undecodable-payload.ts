/**
 * What a workflow receives in place of a message payload that cannot be decoded (an unknown
 * encoding, a key nobody here has, data that is not JSON): a plain marker naming the reason, so a
 * handler can refuse it instead of failing every workflow task of the connection. Built by the
 * worker's payload converter (codec/payload-converter.ts); import-free, so workflows can read it.
 */
export interface UndecodablePayload {
  /** Why it could not be decoded; never the payload's content. */
  readonly undecodablePayload: string;
}

export function isUndecodablePayload(value: unknown): value is UndecodablePayload {
  return typeof value === 'object' && value !== null && typeof (value as Partial<UndecodablePayload>).undecodablePayload === 'string';
}

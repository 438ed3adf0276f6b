/** How the worker's codec hands an undecryptable message to the payload converter (payload-converter.ts). */
export const UNDECODABLE_ENCODING = 'binary/undecodable';
export const UNDECODABLE_REASON_METADATA_KEY = 'undecodable-reason';

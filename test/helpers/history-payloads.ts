/** The payloads of a raw (undecoded) history, found where they are, for tests that look at what Temporal stores. */

export { payloadsIn } from '../../scripts/lib/history-payloads.js';

/** A local activity's marker bookkeeping of the SDK core (its `result` is encrypted). */
export const isCoreBookkeeping = ({ path }: { path: string }): boolean => /markerRecordedEventAttributes\.details\.data\./.test(path);
/** A patch marker (workflow versioning) names its patch in clear: code, not data. */
export const isPatchMarker = ({ path }: { path: string }): boolean => /markerRecordedEventAttributes\.details\.patch-data\./.test(path);

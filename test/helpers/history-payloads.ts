/** The payloads of a raw (undecoded) history, found where they are, for tests that look at what Temporal stores. */

export { isCoreBookkeeping, isHeaderField, isPatchMarker, passesThroughCodec, payloadsIn } from '../../scripts/lib/history-payloads.js';

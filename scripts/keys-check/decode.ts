/**
 * Every payload of every history decoded through the client's data converter (its codecs, then its
 * payload converter), as the pipeline, the CLI and the console read them: counted, the ones that
 * cannot be decoded named, and the transit key versions their data keys were wrapped with.
 */
import { defaultPayloadConverter, type PayloadCodec } from '@temporalio/common';
import { isEncrypted, KEY_VERSION_METADATA_KEY, metadataText } from '../../src/codec/payload-format.js';
import type { FetchedHistory, HistoryFetchFailure } from '../chaos/histories.js';
import { passesThroughCodec, payloadsIn } from '../lib/history-payloads.js';

export interface Undecodable {
  readonly workflowId: string;
  readonly where: string;
  readonly message: string;
}

export interface DecodeReport {
  readonly histories: number;
  readonly payloads: number;
  readonly encrypted: number;
  /** Encrypted payloads by the key version in their metadata (absent: static format). */
  readonly keyVersions: ReadonlyMap<number, number>;
  /** Payloads that did not decode, and histories that could not be fetched (never decoded, so never proven). */
  readonly undecodable: readonly Undecodable[];
}

export async function decodeHistories(
  histories: readonly FetchedHistory[],
  fetchFailures: readonly HistoryFetchFailure[],
  codecs: readonly PayloadCodec[],
): Promise<DecodeReport> {
  const undecodable: Undecodable[] = fetchFailures.map(({ workflowId, message }) => ({
    workflowId,
    where: '(the whole history)',
    message: `could not be fetched: ${message}`,
  }));
  const keyVersions = new Map<number, number>();
  let payloads = 0;
  let encrypted = 0;
  for (const { workflowId, history } of histories) {
    // Header fields and the core's marker bookkeeping are in clear by design: no codec reads them.
    for (const { path, payload } of payloadsIn(history).filter(passesThroughCodec)) {
      payloads += 1;
      if (isEncrypted(payload)) {
        encrypted += 1;
        const version = Number(metadataText(payload.metadata, KEY_VERSION_METADATA_KEY) ?? Number.NaN);
        if (Number.isInteger(version)) keyVersions.set(version, (keyVersions.get(version) ?? 0) + 1);
      }
      try {
        let decoded = [payload];
        for (const codec of [...codecs].reverse()) decoded = await codec.decode(decoded);
        defaultPayloadConverter.fromPayload(decoded[0] ?? {});
      } catch (error) {
        undecodable.push({ workflowId, where: path, message: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
      }
    }
  }
  return { histories: histories.length, payloads, encrypted, keyVersions, undecodable };
}

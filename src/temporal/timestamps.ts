/** A protobuf Timestamp from Temporal's API (seconds as a number or Long, nanos) in epoch milliseconds; undefined when it is unset. */
export function millisOfTimestamp(timestamp: { seconds?: unknown; nanos?: number | null } | null | undefined): number | undefined {
  return timestamp?.seconds == null ? undefined : Number(timestamp.seconds) * 1000 + Math.floor((timestamp.nanos ?? 0) / 1e6);
}

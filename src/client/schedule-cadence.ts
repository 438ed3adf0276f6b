/**
 * A cadence and a Temporal Schedule's spec, both ways: the spec a cadence (daily at HH:MM in a time
 * zone, or every interval, with jitter) is written as, and the cadence read back from a spec, as a
 * login's refresh Schedule and as a book's Schedule each read it. Shared by both kinds of Schedule.
 */
import type { ScheduleDescription, ScheduleOptions } from '@temporalio/client';
import { formatCadenceDuration, type RefreshCadence, type RefreshCadenceArgs } from './refresh-schedule-input.js';

/** The spec of a Schedule that runs at `cadence`: one calendar at HH:MM, or one interval. */
export function scheduleSpecOf(cadence: RefreshCadence): ScheduleOptions['spec'] {
  return cadence.kind === 'daily'
    ? { calendars: [{ hour: cadence.at.hour, minute: cadence.at.minute }], timezone: cadence.timeZone, jitter: cadence.jitter }
    : { intervals: [{ every: cadence.every }], jitter: cadence.jitter };
}

/** The cadence a login's refresh spec was made from (one calendar at HH:MM, or one interval); undefined for a spec of neither. */
export function refreshCadenceOf(spec: ScheduleDescription['spec']): RefreshCadenceArgs | undefined {
  const jitter = formatCadenceDuration(spec.jitter ?? 0);
  const interval = spec.intervals?.[0];
  if (interval) return { kind: 'interval', every: formatCadenceDuration(Number(interval.every)), jitter };
  const calendar = spec.calendars?.[0];
  const hour = calendar?.hour[0]?.start;
  const minute = calendar?.minute[0]?.start;
  if (hour === undefined || minute === undefined) return undefined;
  return { kind: 'daily', at: `${String(hour).padStart(2, '0')}:${String(minute).padStart(2, '0')}`, timeZone: spec.timezone ?? 'UTC', jitter };
}

/** The cadence of a book's Schedule: its interval, else its calendar (an hour or minute it lacks read as 00). */
export function bookCadenceOf(spec: ScheduleDescription['spec']): RefreshCadenceArgs {
  const interval = spec.intervals?.[0];
  const calendar = spec.calendars?.[0];
  const hour = calendar?.hour[0]?.start ?? 0;
  const minute = calendar?.minute[0]?.start ?? 0;
  const jitter = Number(spec.jitter ?? 0);
  return interval
    ? { kind: 'interval', every: formatCadenceDuration(Number(interval.every)), jitter: formatCadenceDuration(jitter) }
    : {
        kind: 'daily',
        at: `${String(hour).padStart(2, '0')}:${String(minute).padStart(2, '0')}`,
        timeZone: spec.timezone ?? 'UTC',
        jitter: formatCadenceDuration(jitter),
      };
}

/**
 * What a book refresh is asked to do, checked once at the start of each run: the input a client
 * would have refused (a start by hand, `temporal workflow start`) fails the run naming each field,
 * and the night a run belongs to. Deterministic code only.
 */
import { ApplicationFailure } from '@temporalio/workflow';
import { BOOK_PAGE_SIZE_LIMITS, DEFAULT_BOOK_PAGE_SIZE, type BookRefreshInput } from '../../contract/book/book-definitions.js';
import {
  DEFAULT_WINDOW_BOUNDS,
  DEFAULT_WINDOW_CONTROL,
  WINDOW_LIMITS,
  type WindowBounds,
  type WindowControl,
} from '../../contract/window/window-definitions.js';
import { CADENCE_PATTERN, CADENCE_RULE, ID_SEGMENT_PATTERN, ID_SEGMENT_RULE } from '../../contract/ids.js';

export interface BookRefreshSettings {
  readonly customerId: string;
  readonly cadence: string;
  readonly scheduleId?: string | undefined;
  readonly bounds: WindowBounds;
  readonly pageSize: number;
  readonly control: WindowControl;
}

/** The input's settings with their defaults; an `InvalidBookRefreshInput` failure (not retried) names every field wrong. */
export function bookRefreshSettings(input: BookRefreshInput | undefined): BookRefreshSettings {
  const problems: string[] = [];
  const whole = (value: unknown, min: number, max: number) => Number.isInteger(value) && (value as number) >= min && (value as number) <= max;
  if (typeof input?.customerId !== 'string' || !ID_SEGMENT_PATTERN.test(input.customerId)) problems.push(`customerId: ${ID_SEGMENT_RULE}`);
  if (typeof input?.cadence !== 'string' || !CADENCE_PATTERN.test(input.cadence)) problems.push(`cadence: ${CADENCE_RULE}`);
  const bounds = { ...DEFAULT_WINDOW_BOUNDS, ...(input?.window ?? {}) };
  for (const name of ['floor', 'ceiling', 'start'] as const) {
    if (!whole(bounds[name], WINDOW_LIMITS.min, WINDOW_LIMITS.max))
      problems.push(`window.${name}: must be a whole number from ${WINDOW_LIMITS.min} to ${WINDOW_LIMITS.max}`);
  }
  if (bounds.floor > bounds.ceiling) problems.push(`window: floor ${bounds.floor} is above ceiling ${bounds.ceiling}`);
  const pageSize = input?.pageSize ?? DEFAULT_BOOK_PAGE_SIZE;
  if (!whole(pageSize, BOOK_PAGE_SIZE_LIMITS.min, BOOK_PAGE_SIZE_LIMITS.max))
    problems.push(`pageSize: must be a whole number from ${BOOK_PAGE_SIZE_LIMITS.min} to ${BOOK_PAGE_SIZE_LIMITS.max}`);
  const control = { ...DEFAULT_WINDOW_CONTROL, ...(input?.control ?? {}) };
  if (!(control.growBelow >= 1 && control.shrinkAbove > control.growBelow)) problems.push('control: growBelow must be at least 1 and below shrinkAbove');
  if (!(control.shrinkFactor > 0 && control.shrinkFactor < 1)) problems.push('control.shrinkFactor: must be between 0 and 1');
  if (!(control.slackMs >= 0 && control.throttleCheckMs >= 0 && control.fleetCheckMs >= 0))
    problems.push('control: slackMs, throttleCheckMs and fleetCheckMs must not be negative');
  if (!(control.silentCheckMs >= 1_000)) problems.push('control.silentCheckMs: must be at least 1000 (each check is a call to Temporal)');
  if (!(control.liveNearMs >= 0 && control.liveSlowMs > control.liveNearMs))
    problems.push('control: liveNearMs must not be negative and must be below liveSlowMs');
  if (problems.length > 0)
    throw ApplicationFailure.create({ type: 'InvalidBookRefreshInput', message: `invalid book refresh input: ${problems.join('; ')}`, nonRetryable: true });
  return {
    customerId: input!.customerId,
    cadence: input!.cadence,
    scheduleId: input!.scheduleId,
    bounds: { ...bounds, start: Math.min(bounds.ceiling, Math.max(bounds.floor, bounds.start)) },
    pageSize,
    control,
  };
}

/** The night a run of the Schedule belongs to: the scheduled time Temporal appended to its id; else when it began. */
export function nightOf(workflowId: string, customerId: string, cadence: string, startTime: Date): string {
  const prefix = `book-${customerId}:${cadence}-`;
  const stamp = workflowId.startsWith(prefix) ? workflowId.slice(prefix.length) : '';
  return /^\d{4}-\d{2}-\d{2}T[\d:.]+Z$/.test(stamp) ? stamp : startTime.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * A MetricMeter that records what is added to its counters: each add as `name{tag=value,...}`, and
 * the sum of the values added per such label. For tests of the product's own metrics.
 */
import assert from 'node:assert/strict';
import type { MetricCounter, MetricGauge, MetricMeter, MetricTags } from '@temporalio/common';

export function recordingMeter() {
  const adds: string[] = [];
  const totals = new Map<string, number>();
  const label = (name: string, tags: MetricTags = {}) =>
    `${name}{${Object.entries(tags)
      .map(([key, value]) => `${key}=${String(value)}`)
      .join(',')}}`;
  const counter = (name: string): MetricCounter => ({
    name,
    kind: 'counter',
    valueType: 'int',
    unit: undefined,
    description: undefined,
    add: (value: number, tags?: MetricTags) => {
      adds.push(label(name, tags));
      totals.set(label(name, tags), (totals.get(label(name, tags)) ?? 0) + value);
    },
    withTags: () => counter(name),
  });
  const gauge = (name: string): MetricGauge => ({
    name,
    kind: 'gauge',
    valueType: 'int',
    unit: undefined,
    description: undefined,
    set: () => undefined,
    withTags: () => gauge(name),
  });
  const meter = {
    createCounter: counter,
    createGauge: gauge,
    createHistogram: () => assert.fail('no histogram'),
    createUpDownCounter: () => assert.fail('no up-down counter'),
    withTags: () => meter,
  } as unknown as MetricMeter;
  return { adds, totals, meter };
}

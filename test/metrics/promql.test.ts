// The reader of dashboard queries and /metrics pages (promql.ts) on the shapes PromQL and Grafana
// give them: it must find every metric a query selects and nothing else.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { exportedMetrics, exportedSamples, promqlNames, variableQueryNames } from './promql.js';

const metricsOf = (expr: string) => promqlNames(expr).selectors.map((selector) => selector.metric);

describe('promqlNames', () => {
  it('finds the histogram a quantile reads, its matchers and what it is summed by', () => {
    const names = promqlNames(
      'histogram_quantile(0.99, sum by (le, activity_type) (rate(temporal_activity_execution_latency_bucket{namespace=~"$namespace", activity_type=~"poll.*"}[$__rate_interval])))',
    );
    assert.deepEqual(names.selectors, [{ metric: 'temporal_activity_execution_latency_bucket', labels: ['namespace', 'activity_type'] }]);
    assert.deepEqual(names.grouping, ['le', 'activity_type']);
  });

  it('finds every operand of binary operations, with or without matchers, past keywords and numbers', () => {
    assert.deepEqual(metricsOf('sum(rate(a_total[5m])) / sum(rate(b_count[5m] offset 1h)) > bool 0.5'), ['a_total', 'b_count']);
    assert.deepEqual(metricsOf('sum(x) by (job) and on (instance) up unless absent(y{a="1"})'), ['x', 'up', 'y']);
    assert.deepEqual(metricsOf('1 - 2e3 * Inf + NaN / 0x1f'), []);
    assert.deepEqual(metricsOf('max without (instance) (temporal_num_pollers) @ end()'), ['temporal_num_pollers']);
  });

  it('reads a name given as a __name__ matcher, and ignores braces, keywords and variables inside strings', () => {
    assert.deepEqual(promqlNames('{__name__="temporal_request", operation!="by (x) {y}"}').selectors, [{ metric: 'temporal_request', labels: ['operation'] }]);
    assert.deepEqual(metricsOf('count(temporal_worker_start{task_queue=~"${task_queue:regex}"}) # a comment naming not_a_metric'), ['temporal_worker_start']);
    assert.deepEqual(metricsOf('topk($limit, rate(foo{a="}{\\"x"}[$__range]))'), ['foo']);
  });

  it('reads Grafana variable queries', () => {
    assert.deepEqual(variableQueryNames('label_values(temporal_num_pollers{namespace=~"$namespace"}, task_queue)'), {
      selectors: [{ metric: 'temporal_num_pollers', labels: ['namespace'] }],
      grouping: ['task_queue'],
    });
    assert.deepEqual(variableQueryNames('label_values(namespace)'), { selectors: [], grouping: [] });
    assert.deepEqual(metricsOf('query_result(topk(5, temporal_request))'), ['temporal_request']);
  });
});

describe('exportedMetrics', () => {
  it('lists each sample name as exported, with the labels of its series', () => {
    const page = [
      '# HELP temporal_request Count of client request successes by rpc name',
      '# TYPE temporal_request counter',
      'temporal_request{operation="GetSystemInfo",service_name="temporal-core-sdk"} 1',
      'temporal_request{namespace="default",operation="DescribeNamespace",service_name="temporal-core-sdk"} 1',
      'temporal_request_latency_bucket{operation="GetSystemInfo",le="+Inf"} 1',
      'temporal_worker_start 1',
      '',
    ].join('\n');
    const metrics = exportedMetrics(page);
    assert.deepEqual([...metrics.keys()], ['temporal_request', 'temporal_request_latency_bucket', 'temporal_worker_start']);
    assert.deepEqual([...metrics.get('temporal_request')!].sort(), ['namespace', 'operation', 'service_name']);
    assert.deepEqual([...metrics.get('temporal_request_latency_bucket')!].sort(), ['le', 'operation']);
    assert.deepEqual([...metrics.get('temporal_worker_start')!], []);
  });
});

describe('exportedSamples', () => {
  it("reads one metric's series with their label values and values, not those of a metric its name starts", () => {
    const page = [
      '# TYPE aggregation_connections gauge',
      'aggregation_connections{namespace="default",status="AwaitingAnswer",task_queue="q"} 2',
      'aggregation_connections{status="odd \\"quoted\\" } value"} 0',
      'aggregation_connections_other{status="Retrieving"} 5',
      'aggregation_connections 7',
      '',
    ].join('\n');
    assert.deepEqual(exportedSamples(page, 'aggregation_connections'), [
      { labels: { namespace: 'default', status: 'AwaitingAnswer', task_queue: 'q' }, value: 2 },
      { labels: { status: 'odd "quoted" } value' }, value: 0 },
      { labels: {}, value: 7 },
    ]);
  });
});

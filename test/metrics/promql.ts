/**
 * Just enough of PromQL and of the Prometheus text format to hold a dashboard's queries against what
 * a process exports: which metric names a query selects (with the labels its matchers name) and which
 * labels it groups by, and which metrics with which labels a /metrics page holds. Not a parser of
 * either language: strings, ranges, numbers, Grafana's $variables, functions, aggregations and
 * keywords are skipped; every other identifier is a metric name.
 */

export interface Selector {
  readonly metric: string;
  /** The label names of its matchers (`{namespace=~"$namespace"}`), __name__ left out. */
  readonly labels: readonly string[];
}

export interface QueryNames {
  readonly selectors: readonly Selector[];
  /** Labels of `by (...)`, `without (...)`, `on (...)`, `ignoring (...)`, `group_left/right (...)`. */
  readonly grouping: readonly string[];
}

const GROUPING_KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);
const OTHER_KEYWORDS = new Set(['bool', 'and', 'or', 'unless', 'offset', 'atan2']);
const NUMBER_WORDS = new Set(['inf', 'nan']);
const IDENTIFIER_START = /[a-zA-Z_:]/;
const IDENTIFIER_PART = /[\w:]/;

/** Index just past the string literal opening at `start` ("...", '...' or `...`). */
function endOfString(text: string, start: number): number {
  const quote = text[start];
  let i = start + 1;
  while (i < text.length && text[i] !== quote) i += quote !== '`' && text[i] === '\\' ? 2 : 1;
  return i + 1;
}

/** The label matchers of the `{...}` opening at `start`: their label names, and a `__name__="..."` name. */
function matchers(text: string, start: number): { end: number; labels: string[]; name?: string } {
  const labels: string[] = [];
  let name: string | undefined;
  let i = start + 1;
  while (i < text.length && text[i] !== '}') {
    const label = /^\s*,?\s*([a-zA-Z_]\w*)\s*(=~|!~|!=|=)\s*/.exec(text.slice(i));
    if (!label) {
      i += /["'`]/.test(text[i]!) ? endOfString(text, i) - i : 1;
      continue;
    }
    i += label[0].length;
    const valueEnd = /["'`]/.test(text[i] ?? '') ? endOfString(text, i) : i;
    if (label[1] === '__name__') {
      if (label[2] === '=') name = text.slice(i + 1, valueEnd - 1);
    } else {
      labels.push(label[1]!);
    }
    i = valueEnd;
  }
  return { end: i + 1, labels, ...(name === undefined ? {} : { name }) };
}

/** The metrics `expr` selects and the labels it groups by. */
export function promqlNames(expr: string): QueryNames {
  const selectors: Selector[] = [];
  const grouping: string[] = [];
  const n = expr.length;
  let i = 0;
  const skipSpace = () => {
    while (i < n && /\s/.test(expr[i]!)) i += 1;
  };
  while (i < n) {
    const c = expr[i]!;
    if (/[\s(),\]+\-*/%^<>=!@]/.test(c)) {
      i += 1;
    } else if (c === '#') {
      while (i < n && expr[i] !== '\n') i += 1; // a comment
    } else if (c === '"' || c === "'" || c === '`') {
      i = endOfString(expr, i);
    } else if (c === '$') {
      // A Grafana variable: $name, ${name} or ${name:format}.
      i = expr[i + 1] === '{' ? expr.indexOf('}', i) + 1 || n : i + 1;
      while (i < n && IDENTIFIER_PART.test(expr[i]!)) i += 1;
    } else if (c === '[') {
      i = expr.indexOf(']', i) + 1 || n; // a range or subquery: [5m], [$__rate_interval], [1h:5m]
    } else if (/[0-9.]/.test(c)) {
      while (i < n && /[\w.]/.test(expr[i]!)) i += 1; // a number or duration: 0.99, 1e3, 0x1f, 5m, 1h30m
    } else if (c === '{') {
      // A selector by matchers only: {__name__="temporal_request"}.
      const found = matchers(expr, i);
      if (found.name !== undefined) selectors.push({ metric: found.name, labels: found.labels });
      i = found.end;
    } else if (IDENTIFIER_START.test(c)) {
      const start = i;
      while (i < n && IDENTIFIER_PART.test(expr[i]!)) i += 1;
      const word = expr.slice(start, i);
      const wordEnd = i;
      skipSpace();
      if (GROUPING_KEYWORDS.has(word)) {
        if (expr[i] === '(') {
          const close = expr.indexOf(')', i);
          grouping.push(
            ...expr
              .slice(i + 1, close < 0 ? n : close)
              .split(',')
              .map((label) => label.trim())
              .filter(Boolean),
          );
          i = close < 0 ? n : close + 1;
        }
        continue;
      }
      if (OTHER_KEYWORDS.has(word) || NUMBER_WORDS.has(word.toLowerCase())) continue;
      // A function call or an aggregation (`sum (`, `sum by (le) (`, `sum without (x) (`).
      if (expr[i] === '(' || /^(by|without)\b/.test(expr.slice(i))) continue;
      if (expr[i] === '{') {
        const found = matchers(expr, i);
        selectors.push({ metric: word, labels: found.labels });
        i = found.end;
      } else {
        selectors.push({ metric: word, labels: [] });
        i = wordEnd;
      }
    } else {
      i += 1;
    }
  }
  return { selectors, grouping };
}

/**
 * A Grafana Prometheus variable query: `label_values(<expr>, <label>)` selects <expr> and needs
 * <label> on it; `label_values(<label>)` selects nothing; `query_result(<expr>)` selects <expr>.
 */
export function variableQueryNames(query: string): QueryNames {
  const labelValues = /^\s*label_values\s*\(([^]*),\s*([a-zA-Z_]\w*)\s*\)\s*$/.exec(query);
  if (labelValues) {
    const names = promqlNames(labelValues[1]!);
    return { selectors: names.selectors, grouping: [...names.grouping, labelValues[2]!] };
  }
  if (/^\s*label_values\s*\(\s*[a-zA-Z_]\w*\s*\)\s*$/.test(query)) return { selectors: [], grouping: [] };
  const queryResult = /^\s*query_result\s*\(([^]*)\)\s*$/.exec(query);
  return promqlNames(queryResult ? queryResult[1]! : query);
}

/**
 * The metrics of a page in the Prometheus text format, each with the label names its series carry.
 * Sample names are as exported: a histogram's `_bucket`, `_sum` and `_count`, a counter with or
 * without `_total`, exactly as the exporter wrote them.
 */
export function exportedMetrics(page: string): Map<string, Set<string>> {
  const metrics = new Map<string, Set<string>>();
  for (const line of page.split('\n')) {
    const sample = /^([a-zA-Z_:][\w:]*)(\{)?/.exec(line);
    if (!sample) continue; // blank, # HELP, # TYPE
    const labels = metrics.get(sample[1]!) ?? new Set<string>();
    metrics.set(sample[1]!, labels);
    if (sample[2]) for (const label of matchers(line, sample[1]!.length).labels) labels.add(label);
  }
  return metrics;
}

/** One series of a page: its labels and value. */
export interface Sample {
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** The series of `metric` on a page in the Prometheus text format, with their label values (escapes undone). */
export function exportedSamples(page: string, metric: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of page.split('\n')) {
    if (!line.startsWith(metric) || !/^[{ ]/.test(line.slice(metric.length))) continue;
    const close = line.startsWith('{', metric.length) ? line.lastIndexOf('}') : metric.length - 1;
    const labels: Record<string, string> = {};
    for (const [, name, value] of line.slice(metric.length, close + 1).matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[name!] = value!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    }
    samples.push({
      labels,
      value: Number(
        line
          .slice(close + 1)
          .trim()
          .split(/\s+/)[0],
      ),
    });
  }
  return samples;
}

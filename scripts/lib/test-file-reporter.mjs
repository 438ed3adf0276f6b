// A node:test reporter for scripts/run-tests.mjs, beside the human one: one JSON line per test
// started, passed or failed in the file, and a closing {"type":"end"} line written only when
// node:test finished the whole file. A file whose output has no end line was cut short (it exited
// before its tests finished, or defined none, so node:test never ran).
import { failureExcerpt } from './failure-excerpt.mjs';

export default async function* testFileReporter(source) {
  for await (const event of source) {
    const { type, data } = event;
    if (type === 'test:start') {
      yield `${JSON.stringify({ type: 'start', name: data.name, nesting: data.nesting })}\n`;
    } else if (type === 'test:pass' || type === 'test:fail') {
      const error = data.details?.error;
      const cause = error?.cause ?? error;
      yield `${JSON.stringify({
        type: type === 'test:pass' ? 'pass' : 'fail',
        name: data.name,
        nesting: data.nesting,
        suite: data.details?.type === 'suite',
        skip: data.skip === undefined || data.skip === false ? undefined : data.skip === true ? '' : String(data.skip),
        todo: data.todo === undefined || data.todo === false ? undefined : data.todo === true ? '' : String(data.todo),
        error: type === 'test:fail' && cause ? failureExcerpt(cause.message ?? cause) : undefined,
      })}\n`;
    }
  }
  yield `${JSON.stringify({ type: 'end' })}\n`;
}

/**
 * Experiment only, never in production: measures what the SDK's isolate execution timeout costs.
 * Preloaded into the worker (NODE_OPTIONS="--require ./bench/vm-watchdog-probe.cjs"), it runs in the
 * workflow thread too, counts the calls into the workflow sandbox (vm Script.runInContext) and
 * writes the count to VM_PROBE_OUT.<threadId> every second (threads that never call in write nothing); with VM_WATCHDOG=off it drops their `timeout`,
 * so Node starts no watchdog thread per call (and a workflow that never yields would hang its thread).
 */
const { isMainThread, threadId } = require('node:worker_threads');
const { writeFileSync } = require('node:fs');
const vm = require('node:vm');

if (!isMainThread) {
  const original = vm.Script.prototype.runInContext;
  const dropTimeout = process.env.VM_WATCHDOG === 'off';
  let calls = 0;
  vm.Script.prototype.runInContext = function runInContext(context, options) {
    calls += 1;
    if (dropTimeout && options && options.timeout !== undefined) {
      const { timeout: _dropped, ...rest } = options;
      return original.call(this, context, rest);
    }
    return original.call(this, context, options);
  };
  const out = process.env.VM_PROBE_OUT;
  if (out) setInterval(() => calls > 0 && writeFileSync(`${out}.${threadId}`, String(calls)), 1000).unref();
}

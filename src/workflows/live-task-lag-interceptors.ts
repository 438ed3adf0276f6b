/**
 * Workflow interceptors that tell the worker when each workflow task of a prioritized workflow was
 * handed out (bundled workflow code: no Node built-ins). The workflow's clock is the server's time
 * of the task's start (its WorkflowTaskStarted event); the worker's sink reads its own clock as the
 * activation concludes, so their difference is how long the task took on this worker: its wait for
 * the workflow thread and its run. A crowded worker shows there first: a night under other CPU load
 * kept live activity starts near idle while a live answer's workflow task spent 104 ms on the worker
 * (docs/benchmarks.md). The worker keeps the live keys' times (src/worker/live-task-recording.ts).
 *
 * Sinks are not history: replays and other workers agree whatever this does, and a replay does not
 * call it (callDuringReplay is off).
 */
import { proxySinks, workflowInfo, type Sinks, type WorkflowInterceptorsFactory } from '@temporalio/workflow';

export interface LiveTaskSinks extends Sinks {
  readonly liveTasks: {
    /** A workflow task of this workflow concludes; `startedAtMs`: the server's time it was handed out (the workflow's clock). */
    concluded(startedAtMs: number): void;
  };
}

export const interceptors: WorkflowInterceptorsFactory = () => {
  const key = workflowInfo().priority?.priorityKey;
  // Unprioritized workflows are never live (0 is the server's default, an unset key): no call at all.
  if (key === undefined || key < 1) return {};
  const { liveTasks } = proxySinks<LiveTaskSinks>();
  // Per workflow: the task last told of (its start time), so a task's later activations (a local
  // activity resolved within it) do not count its time again.
  let toldOf: number | undefined;
  return {
    internals: [
      {
        concludeActivation(input, next) {
          const startedAtMs = Date.now();
          // A query's activation reads as replaying and keeps the last task's time: the time since
          // then is a user's pause, not a task's (each answer's state query would read seconds).
          if (!workflowInfo().unsafe.isReplaying && startedAtMs !== toldOf) {
            toldOf = startedAtMs;
            liveTasks.concluded(startedAtMs);
          }
          return next(input);
        },
      },
    ],
  };
};

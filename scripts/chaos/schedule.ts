/**
 * The chaos itself: worker SIGKILLs at random intervals during the kill window, and one restart of
 * the dev server. With `--kill-target window` a kill, once its time has come, waits for the next
 * moment the proxy holds a worker's Authorize answer reply (the service has acted, the worker does
 * not know yet: where a resubmitted answer becomes a duplicate) and kills that worker; if no answer
 * is in flight before the kill window closes, the victim is random.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { KillTarget, ServerStopSignal } from './options.js';
import type { DevServer } from '../lib/dev-server.js';
import type { KillRecord, WorkerPool } from './processes.js';
import type { ChaosProxy } from './proxy.js';
import type { Random } from './random.js';
import { seconds, type Timeline } from './timeline.js';

export interface ChaosScheduleOptions {
  readonly killEveryMs: number;
  readonly killTarget: KillTarget;
  /** Kills happen from the start until this many ms later. */
  readonly killWindowMs: number;
  /** 0: no restart. */
  readonly serverRestartAtMs: number;
  readonly serverStopSignal: ServerStopSignal;
  readonly pool: WorkerPool;
  readonly server: DevServer;
  readonly proxy: ChaosProxy;
  readonly random: Random;
  readonly timeline: Timeline;
}

export interface ServerRestartRecord {
  readonly atMs: number;
  readonly stopMs: number;
  /** The stop signal was not enough within the grace period: SIGKILL followed. */
  readonly forced: boolean;
  readonly startMs: number;
}

export interface ChaosRecord {
  readonly kills: readonly (Omit<KillRecord, 'replacementReadyMs'> & { readonly atMs: number; readonly inWindow: boolean })[];
  readonly restart?: ServerRestartRecord | undefined;
  /** Why the restart did not happen, when it did not. */
  readonly restartSkipped?: string | undefined;
  readonly errors: readonly string[];
}

export interface RunningChaos {
  /** Stops further kills, waits for a kill or restart under way, and says what was done. */
  stop(): Promise<ChaosRecord>;
}

export function startChaos(options: ChaosScheduleOptions): RunningChaos {
  const { pool, server, proxy, random, timeline } = options;
  const abort = new AbortController();
  const kills: (KillRecord & { atMs: number; inWindow: boolean })[] = [];
  const errors: string[] = [];
  let restart: ServerRestartRecord | undefined;
  let restartSkipped: string | undefined;
  let restarting: Promise<void> = Promise.resolve();
  const origin = Date.now();

  const sleep = (ms: number) =>
    delay(ms, undefined, { signal: abort.signal }).then(
      () => true,
      () => false,
    );

  const restartLoop = async (): Promise<void> => {
    if (options.serverRestartAtMs <= 0) return;
    if (!(await sleep(options.serverRestartAtMs))) {
      restartSkipped = 'every connection ended before the planned restart';
      timeline.mark(`dev server restart skipped: ${restartSkipped}`);
      return;
    }
    const atMs = timeline.now();
    timeline.mark(`dev server: stopping (${options.serverStopSignal})`);
    restarting = server.restart(options.serverStopSignal).then(
      ({ stopMs, forced, startMs }) => {
        restart = { atMs, stopMs, forced, startMs };
        const how = forced ? `still up ${seconds(stopMs)} after ${options.serverStopSignal} (open long polls), SIGKILLed` : `stopped in ${seconds(stopMs)}`;
        timeline.mark(`dev server: ${how}; up again on the same file and port in ${seconds(startMs)}`);
      },
      (error: unknown) => {
        const message = `dev server restart failed: ${error instanceof Error ? error.message : String(error)}`;
        errors.push(message);
        timeline.mark(message);
      },
    );
    await restarting;
  };

  const killLoop = async (): Promise<void> => {
    if (options.killEveryMs <= 0) return;
    const { killEveryMs } = options;
    // Kill times are drawn from the start, not from the previous kill: a kill held back by the
    // restart (or by a slow replacement) still happens, just later.
    let planned = 0;
    for (;;) {
      planned += random.between(Math.round(killEveryMs / 2), Math.round((killEveryMs * 3) / 2));
      if (planned > options.killWindowMs) return;
      // ...but not long past the window: the deadline allows for activities orphaned by kills in it.
      if (Date.now() - origin > options.killWindowMs + killEveryMs) {
        timeline.mark(`kills stopped ${seconds(killEveryMs)} after the kill window: slow replacements held them back`);
        return;
      }
      const wait = origin + planned - Date.now();
      if (wait > 0 && !(await sleep(wait))) return;
      if (abort.signal.aborted) return;
      // No kill while the server restarts: a replacement could not connect anyway.
      await restarting;
      if (abort.signal.aborted) return;
      let victim: string | undefined;
      let inWindow = false;
      if (options.killTarget === 'window') {
        const ready = new Set(pool.readyNames());
        const untilWindowCloses = Math.max(1_000, origin + options.killWindowMs - Date.now());
        const holders = (await proxy.answerHolders(untilWindowCloses, abort.signal)).filter((name) => ready.has(name));
        if (holders.length > 0) {
          victim = random.pick(holders);
          inWindow = true;
        }
      }
      if (abort.signal.aborted) return;
      const candidates = pool.readyNames();
      if (victim === undefined || !candidates.includes(victim)) {
        if (candidates.length === 0) continue;
        victim = random.pick(candidates);
        inWindow = (proxy.heldAnswers().get(victim) ?? 0) > 0;
      }
      const atMs = timeline.now();
      try {
        const record = await pool.kill(victim, inWindow ? 'while the proxy held its Authorize answer reply' : 'no answer reply in flight');
        kills.push({ ...record, atMs, inWindow });
      } catch (error) {
        errors.push(`kill ${victim}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  };

  const restartDone = restartLoop();
  const killsDone = killLoop();

  return {
    async stop() {
      abort.abort();
      await Promise.all([restartDone, killsDone]);
      return { kills, restart, restartSkipped, errors };
    },
  };
}

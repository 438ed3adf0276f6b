/**
 * The fleet page's rule for how long a night lasts (docs/fleet.md, "Choosing the window's bounds"),
 * computed from a measured run's own inputs and set beside the night that run took, so the page's
 * promise is checked, not assumed: N / min(R / 3, ⅔ × C × 1000 / c, ceiling / t), after the
 * window's ramp: from its start it grows by half, a round (a child's time t) at a time, until it holds
 * the rate × t that the rate needs; what is done meanwhile is the sum of its sizes. Pure.
 */
import { slowStartGrowth } from '../src/workflows/window/window-controller.js';

export interface NightRuleInputs {
  /** Logins refreshed (N). */
  readonly logins: number;
  /** The service's limit for the tenant, requests a second (R); undefined: none (a refresh is three requests). */
  readonly serviceLimitRps?: number | undefined;
  /** Cores of the machine the stack runs on (C). */
  readonly cores: number;
  /** The stack's CPU a refresh (c), ms: what bench:burst prints for a refresh alone. */
  readonly cpuPerRefreshMs: number;
  /** The window's ceiling, and the best time a refresh took (t, ms): Little's law's bound on the rate. */
  readonly ceiling: number;
  readonly bestFinishMs: number | undefined;
  /** The window's start (BOOK_WINDOW_START): where its ramp begins; without it, no ramp is counted. */
  readonly start?: number | undefined;
  /** The night the run measured, s. */
  readonly nightS: number;
}

const REQUESTS_PER_REFRESH = 3;
/** The share of the cores the rule leaves the books: a third stays free for live end users. */
const BOOK_SHARE_OF_CORES = 2 / 3;

export interface NightRamp {
  /** Rounds (child times) from the start to the window the rate needs. */
  readonly rounds: number;
  /** Logins done meanwhile. */
  readonly done: number;
  readonly seconds: number;
}

/** The window's way up from `start` to the rate × t the rate needs: a round a child's time, each completing the window's size. */
export function nightRamp(start: number, rate: number, childMs: number, logins: number): NightRamp {
  const needed = Math.max(1, (rate * childMs) / 1000);
  let size = Math.max(1, start);
  let rounds = 0;
  let done = 0;
  while (size < needed && done < logins) {
    done += size;
    rounds += 1;
    size = slowStartGrowth(size);
  }
  return { rounds, done: Math.min(done, logins), seconds: (rounds * childMs) / 1000 };
}

/** Refreshes a second the rule allows, by bound, and the night it predicts (s): the ramp, then the rest at the rate. */
export function nightRule(inputs: NightRuleInputs): {
  service?: number | undefined;
  cores: number;
  window?: number | undefined;
  rate: number;
  ramp?: NightRamp | undefined;
  predictedS: number;
} {
  const service = inputs.serviceLimitRps === undefined ? undefined : inputs.serviceLimitRps / REQUESTS_PER_REFRESH;
  // A CPU a refresh of 0 or less (an idle read high) bounds nothing: the rule then says so rather than a night of 0 s.
  const cores = inputs.cpuPerRefreshMs > 0 ? (BOOK_SHARE_OF_CORES * inputs.cores * 1000) / inputs.cpuPerRefreshMs : Number.POSITIVE_INFINITY;
  const window = inputs.bestFinishMs === undefined || inputs.bestFinishMs <= 0 ? undefined : (inputs.ceiling * 1000) / inputs.bestFinishMs;
  const rate = Math.min(service ?? Number.POSITIVE_INFINITY, cores, window ?? Number.POSITIVE_INFINITY);
  const ramp =
    inputs.start === undefined || inputs.bestFinishMs === undefined || inputs.bestFinishMs <= 0 || !Number.isFinite(rate)
      ? undefined
      : nightRamp(inputs.start, rate, inputs.bestFinishMs, inputs.logins);
  return { service, cores, window, rate, ramp, predictedS: (ramp?.seconds ?? 0) + (inputs.logins - (ramp?.done ?? 0)) / rate };
}

/** e.g. `the night-length rule: 1000 / min(no service limit, ⅔ × 2 × 1000 / 123.2 ms = 10.8, 50 / 1.31 s = 38.2) = 1000 / 10.8 a second = 92 s; the night took 135 s (the rule -32%)` */
export function nightRuleLine(inputs: NightRuleInputs): string {
  const { service, cores, window, rate, ramp, predictedS } = nightRule(inputs);
  const terms = [
    service === undefined ? 'no service limit' : `${inputs.serviceLimitRps} / 3 = ${service.toFixed(1)}`,
    Number.isFinite(cores)
      ? `⅔ × ${inputs.cores} × 1000 / ${inputs.cpuPerRefreshMs.toFixed(1)} ms = ${cores.toFixed(1)}`
      : `no CPU a refresh measured (${inputs.cpuPerRefreshMs.toFixed(1)} ms)`,
    window === undefined ? 'no best time yet' : `${inputs.ceiling} / ${((inputs.bestFinishMs ?? 0) / 1000).toFixed(2)} s = ${window.toFixed(1)}`,
  ];
  const off = (100 * (predictedS - inputs.nightS)) / inputs.nightS;
  const rest = inputs.logins - (ramp?.done ?? 0);
  const ramped =
    ramp === undefined || ramp.rounds === 0
      ? ''
      : `the window's ramp from ${inputs.start} (${ramp.rounds} rounds of ${((inputs.bestFinishMs ?? 0) / 1000).toFixed(2)} s, ${ramp.done} done) ${ramp.seconds.toFixed(0)} s + `;
  return `the night-length rule: ${ramped}${rest} / min(${terms.join(', ')}) = ${rest} / ${rate.toFixed(1)} a second = ${predictedS.toFixed(0)} s; the night took ${inputs.nightS.toFixed(0)} s (the rule ${off >= 0 ? '+' : ''}${off.toFixed(0)}%)`;
}

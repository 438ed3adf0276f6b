/** How the burst's runs (the night and the storm) print: a line to stdout, a figure or `n/a`. */

export function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** A figure with `digits` decimals, or `n/a` where there is none (NaN, infinite). */
export const fmt = (value: number, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');

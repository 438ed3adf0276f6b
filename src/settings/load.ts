/**
 * The one reader of process.env: each loader of src/settings/ (and of the tools' own settings beside
 * them) parses the environment through parseEnv once, checking the Node.js runtime first. Empty values
 * count as unset; a bad value is a ConfigError with one line per problem, naming its VARIABLE.
 */
import { z } from 'zod';
import { nodeRuntimeProblem } from './node-runtime.js';
import { doc, group } from './document.js';

export const RuntimeVars = group(
  z.object({
    ALLOW_UNSUPPORTED_NODE: doc(
      z.literal('true', { error: (issue) => `expected true or unset, got ${JSON.stringify(issue.input)}` }).optional(),
      'true: run on an unsupported (end-of-life) Node.js anyway. Only bench/runtimes.ts sets it, to measure the product on the runtime it replaced; never in production.',
    ),
  }),
  'Runtime (every process)',
  'Every process that loads its settings through src/settings/ refuses a Node.js older than the major .nvmrc pins, naming the runtime.',
);

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
  }
}

/** Empty strings count as unset, so `FOO=` in a .env file means "use the default". */
function withoutEmpty(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''));
}

function problemsOf(error: z.ZodError): string[] {
  return error.issues.map((issue) => `${issue.path.join('.') || 'environment'}: ${issue.message}`);
}

/** Every process loads its settings here first, so the runtime is checked with the environment (ALLOW_UNSUPPORTED_NODE). */
function checkNodeRuntime(env: Record<string, string>): void {
  const runtime = RuntimeVars.safeParse(env);
  if (!runtime.success) throw new ConfigError(problemsOf(runtime.error));
  const problem = nodeRuntimeProblem(process.versions.node);
  if (problem && runtime.data.ALLOW_UNSUPPORTED_NODE !== 'true') throw new ConfigError([problem]);
}

export function parseEnv<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv = process.env): z.output<S> {
  const set = withoutEmpty(env);
  checkNodeRuntime(set);
  const parsed = schema.safeParse(set);
  if (!parsed.success) throw new ConfigError(problemsOf(parsed.error));
  return parsed.data;
}

/** A script's settings: `load()`, or, on a bad value, its problems on stderr after `name: ` and exit code 2. */
export function settingsOrExit<T>(name: string, load: () => T): T {
  try {
    return load();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${name}: ${error.problems.join('; ')}\n`);
    process.exit(2);
  }
}

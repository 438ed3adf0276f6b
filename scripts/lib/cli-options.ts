/**
 * The rehearsals' command lines read with node:util's parseArgs (its tokens), and refused the same
 * way in each: an unknown option or a bare word, a flag given a value, an option given twice or
 * without its value, each named. `refuse(name, problem)` makes the harness's own typed error.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

export interface CommandLine {
  readonly flags: ReadonlySet<string>;
  /** Each option's value, by its `--name`. */
  readonly values: ReadonlyMap<string, string>;
}

export interface CommandLineSpec {
  /** Options that take no value (`--keep-logs`). */
  readonly flags: readonly string[];
  /** Options that take one (`--seed 7` or `--seed=7`). */
  readonly values: readonly string[];
}

export function readCommandLine(argv: readonly string[], spec: CommandLineSpec, refuse: (name: string, problem: string) => Error): CommandLine {
  const options: NonNullable<ParseArgsConfig['options']> = {};
  for (const flag of spec.flags) options[flag.slice(2)] = { type: 'boolean' };
  for (const option of spec.values) options[option.slice(2)] = { type: 'string' };
  // Not strict: what parseArgs would refuse is refused below, by name and in the harness's words.
  const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  const flags = new Set<string>();
  const values = new Map<string, string>();
  for (const token of tokens) {
    if (token.kind !== 'option') {
      const word = argv[token.index] ?? '';
      throw refuse(word, word.startsWith('-') ? 'unknown option' : 'unexpected argument (options start with --)');
    }
    const name = token.rawName;
    if (spec.flags.includes(name)) {
      if (token.value !== undefined) throw refuse(name, 'takes no value');
      flags.add(name);
      continue;
    }
    if (!spec.values.includes(name)) throw refuse(argv[token.index] ?? name, 'unknown option');
    if (values.has(name)) throw refuse(name, 'given twice');
    // `--seed --keep-logs`: parseArgs takes the next option as the value; it is a missing one.
    if (token.value === undefined || token.value === '' || (!token.inlineValue && token.value.startsWith('--'))) throw refuse(name, 'needs a value');
    values.set(name, token.value);
  }
  return { flags, values };
}

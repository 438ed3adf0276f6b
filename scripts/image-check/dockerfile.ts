/**
 * Reads the project's Dockerfile into stages image-check can run: FROM (with AS), WORKDIR, COPY
 * (context or --from a stage), RUN (shell form, --mount=type=cache only), ENV, USER, HEALTHCHECK and
 * CMD (exec form). Anything else is refused with its line, so the Dockerfile cannot grow an
 * instruction the check silently skips: teach this file first.
 */
export class DockerfileError extends Error {
  override readonly name = 'DockerfileError';
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(`Dockerfile line ${line}: ${message}`);
  }
}

export type Step =
  | { readonly kind: 'WORKDIR'; readonly line: number; readonly path: string }
  | { readonly kind: 'COPY'; readonly line: number; readonly from?: string | undefined; readonly sources: readonly string[]; readonly dest: string }
  | { readonly kind: 'RUN'; readonly line: number; readonly command: string; readonly cacheMounts: readonly string[] }
  | { readonly kind: 'ENV'; readonly line: number; readonly values: readonly (readonly [string, string])[] }
  | { readonly kind: 'USER'; readonly line: number; readonly user: string };

export interface ExecForm {
  readonly line: number;
  readonly argv: readonly string[];
}

export interface Stage {
  readonly line: number;
  readonly image: string;
  readonly name: string;
  readonly steps: Step[];
  healthcheck?: ExecForm & { readonly options: Readonly<Record<string, string>> };
  cmd?: ExecForm;
}

/** Joins `\`-continued lines and drops comments, keeping each instruction's first line number. */
function instructions(text: string): { line: number; text: string }[] {
  const result: { line: number; text: string }[] = [];
  let current: { line: number; text: string } | undefined;
  for (const [index, raw] of text.split('\n').entries()) {
    const trimmed = raw.trim();
    if (trimmed.startsWith('#') || (trimmed === '' && current === undefined)) continue;
    const continued = /\\\s*$/.test(raw);
    const piece = continued ? raw.replace(/\\\s*$/, '') : raw;
    if (current) current.text += ` ${piece.trim()}`;
    else current = { line: index + 1, text: piece.trim() };
    if (!continued) {
      result.push(current);
      current = undefined;
    }
  }
  if (current) result.push(current);
  return result;
}

/** `["node", "x.js"]`: a JSON array of strings, as Docker requires for the exec form. */
function execForm(line: number, text: string, what: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed) || parsed.length === 0 || !parsed.every((item) => typeof item === 'string')) {
    throw new DockerfileError(line, `${what} must use the exec form, a JSON array of strings (got ${text})`);
  }
  return parsed;
}

/** Leading `--name=value` flags of an instruction, and the rest. */
function flags(text: string): { flags: [string, string][]; rest: string } {
  const found: [string, string][] = [];
  let rest = text;
  for (let match = /^--([a-z-]+)=(\S+)\s+/.exec(rest); match; match = /^--([a-z-]+)=(\S+)\s+/.exec(rest)) {
    found.push([match[1]!, match[2]!]);
    rest = rest.slice(match[0].length);
  }
  return { flags: found, rest };
}

export function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  for (const { line, text: instruction } of instructions(text)) {
    const match = /^([A-Za-z]+)\s+(.*)$/s.exec(instruction);
    if (!match) throw new DockerfileError(line, `cannot read "${instruction}"`);
    const keyword = match[1]!.toUpperCase();
    const args = match[2]!.trim();
    if (keyword === 'FROM') {
      const from = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args);
      if (!from) throw new DockerfileError(line, `FROM ${args}: expected FROM <image> [AS <name>]`);
      stages.push({ line, image: from[1]!, name: from[2] ?? `stage-${stages.length}`, steps: [] });
      continue;
    }
    const stage = stages.at(-1);
    if (!stage) throw new DockerfileError(line, `${keyword} before any FROM`);
    switch (keyword) {
      case 'WORKDIR':
        stage.steps.push({ kind: 'WORKDIR', line, path: args });
        break;
      case 'USER':
        stage.steps.push({ kind: 'USER', line, user: args });
        break;
      case 'ENV': {
        const values: [string, string][] = [];
        if (/["'$]/.test(args)) throw new DockerfileError(line, 'ENV with quotes or $variables is not supported by image-check: use plain KEY=value');
        const words = args.split(/\s+/);
        if (!words[0]!.includes('=')) values.push([words[0]!, words.slice(1).join(' ')]);
        else
          for (const word of words) {
            const eq = word.indexOf('=');
            if (eq <= 0) throw new DockerfileError(line, `ENV ${word}: expected KEY=value`);
            values.push([word.slice(0, eq), word.slice(eq + 1)]);
          }
        stage.steps.push({ kind: 'ENV', line, values });
        break;
      }
      case 'COPY': {
        const { flags: given, rest } = flags(args);
        let from: string | undefined;
        for (const [name, value] of given) {
          if (name === 'from') from = value;
          else throw new DockerfileError(line, `COPY --${name} is not supported by image-check`);
        }
        if (rest.startsWith('[')) throw new DockerfileError(line, 'COPY in JSON form is not supported by image-check');
        const paths = rest.split(/\s+/);
        if (paths.length < 2) throw new DockerfileError(line, `COPY ${rest}: expected <source>... <dest>`);
        if (paths.some((path) => /[*?[]/.test(path))) throw new DockerfileError(line, 'COPY with wildcards is not supported by image-check: name each path');
        stage.steps.push({ kind: 'COPY', line, from, sources: paths.slice(0, -1), dest: paths.at(-1)! });
        break;
      }
      case 'RUN': {
        const { flags: given, rest } = flags(args);
        const cacheMounts: string[] = [];
        for (const [name, value] of given) {
          const target = /^type=cache,target=(\S+)$/.exec(value)?.[1];
          if (name !== 'mount' || target === undefined)
            throw new DockerfileError(line, `RUN --${name}=${value}: only --mount=type=cache,target=<dir> is supported by image-check`);
          cacheMounts.push(target);
        }
        if (rest.startsWith('[')) throw new DockerfileError(line, 'RUN in exec form is not supported by image-check: use the shell form');
        stage.steps.push({ kind: 'RUN', line, command: rest, cacheMounts });
        break;
      }
      case 'HEALTHCHECK': {
        const { flags: given, rest } = flags(args);
        const cmd = /^CMD\s+(.*)$/s.exec(rest);
        if (!cmd) throw new DockerfileError(line, `HEALTHCHECK ${rest}: expected HEALTHCHECK [--option=value ...] CMD [...]`);
        stage.healthcheck = { line, options: Object.fromEntries(given), argv: execForm(line, cmd[1]!, 'HEALTHCHECK CMD') };
        break;
      }
      case 'CMD':
        stage.cmd = { line, argv: execForm(line, args, 'CMD') };
        break;
      default:
        throw new DockerfileError(line, `${keyword} is not supported by image-check (scripts/image-check/dockerfile.ts): teach it there, or do without`);
    }
  }
  if (stages.length === 0) throw new DockerfileError(1, 'no FROM');
  return stages;
}

/** The stage's WORKDIR (the last one), its USER and ENV, as the image would have them at the end. */
export function stageSettings(stage: Stage): { workdir: string | undefined; user: string | undefined; env: Map<string, string> } {
  let workdir: string | undefined;
  let user: string | undefined;
  const env = new Map<string, string>();
  for (const step of stage.steps) {
    if (step.kind === 'WORKDIR') workdir = step.path;
    else if (step.kind === 'USER') user = step.user;
    else if (step.kind === 'ENV') for (const [name, value] of step.values) env.set(name, value);
  }
  return { workdir, user, env };
}

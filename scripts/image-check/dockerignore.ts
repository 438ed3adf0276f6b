/**
 * The build context `docker build .` would send: the project's files minus what .dockerignore
 * excludes, with Docker's rules (moby's patternmatcher): one pattern a line, `#` comments, `!`
 * re-includes, the last matching pattern wins, a pattern matching a directory matches everything
 * under it, `*` and `?` stay within one path segment, `**` spans any number of them. Character
 * classes (`[...]`) are refused rather than guessed at.
 */
import { readdirSync } from 'node:fs';
import { join, posix } from 'node:path';

export class DockerignoreError extends Error {
  override readonly name = 'DockerignoreError';
  constructor(
    readonly line: number,
    readonly pattern: string,
    message: string,
  ) {
    super(`.dockerignore line ${line} (${pattern}): ${message}`);
  }
}

export interface IgnorePattern {
  readonly text: string;
  readonly exclusion: boolean;
  readonly regex: RegExp;
}

function toRegex(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]!;
    if (char === '*' && pattern[i + 1] === '*') {
      // `**/` is zero or more whole segments; a trailing `**` is anything.
      if (pattern[i + 2] === '/') {
        source += '(?:.*/)?';
        i += 2;
      } else {
        source += '.*';
        i += 1;
      }
    } else if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else if (char === '\\' && i + 1 < pattern.length) source += pattern[++i]!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    else source += char.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

export function parseDockerignore(text: string): IgnorePattern[] {
  const patterns: IgnorePattern[] = [];
  for (const [index, raw] of text.split('\n').entries()) {
    let line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const exclusion = line.startsWith('!');
    if (exclusion) line = line.slice(1).trim();
    if (/[[\]]/.test(line)) throw new DockerignoreError(index + 1, raw.trim(), 'character classes are not supported by image-check');
    const cleaned = posix.normalize(line).replace(/^\/+/, '').replace(/\/+$/, '') || '.';
    patterns.push({ text: raw.trim(), exclusion, regex: toRegex(cleaned) });
  }
  return patterns;
}

/** Whether Docker leaves `path` (relative, `/`-separated) out of the context. */
export function isExcluded(path: string, patterns: readonly IgnorePattern[]): boolean {
  const segments = path.split('/');
  let excluded = false;
  for (const pattern of patterns) {
    let match = pattern.regex.test(path);
    for (let i = 1; !match && i < segments.length; i++) match = pattern.regex.test(segments.slice(0, i).join('/'));
    if (match) excluded = !pattern.exclusion;
  }
  return excluded;
}

/** Every file of the context under `root`, relative and sorted; excluded directories are not walked unless a `!` pattern reaches inside. */
export function contextFiles(root: string, patterns: readonly IgnorePattern[]): string[] {
  const reincluded = patterns.filter((pattern) => pattern.exclusion).map((pattern) => pattern.text.slice(1).trim().replace(/^\/+/, ''));
  const files: string[] = [];
  const walk = (relative: string) => {
    for (const entry of readdirSync(join(root, relative), { withFileTypes: true })) {
      const path = relative ? `${relative}/${entry.name}` : entry.name;
      const excluded = isExcluded(path, patterns);
      if (entry.isDirectory()) {
        if (!excluded || reincluded.some((text) => text.startsWith(`${path}/`) || text.startsWith('*'))) walk(path);
      } else if (!excluded && entry.isFile()) {
        files.push(path);
      }
    }
  };
  walk('');
  return files.sort();
}

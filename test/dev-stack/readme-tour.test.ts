/**
 * The README's five-minute tour, run as a newcomer runs it: `npm start` (here on ports of its own,
 * found by the variables the README names), then every command of the tour's `sh` blocks in order,
 * verbatim, in a second "terminal" (a shell with the stack's variables and TEMPORAL_ADDRESS). The
 * only thing filled in is what the README asks the reader to fill in: `<LoginId>` and `<refreshId>`,
 * taken from what an earlier command printed. The banner the README shows must be the one the stack
 * prints, label for label.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DevStackRunner, type RunningStack } from './dev-stack-process.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const COMMAND_TIMEOUT_MS = 150_000;

/** The tour's section of the README: from its heading to the next second-level heading. */
function tourSection(): string {
  const readme = readFileSync(`${ROOT}README.md`, 'utf8');
  const start = readme.indexOf('## A five-minute tour');
  assert.ok(start >= 0, 'the README has its five-minute tour');
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
}

/** Each fenced block of the section with its language: `sh` blocks are commands, bare ones output. */
function fencedBlocks(section: string): { language: string; lines: string[] }[] {
  return [...section.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((match) => ({ language: match[1]!, lines: match[2]!.trimEnd().split('\n') }));
}

/** A block's commands: backslash-continued lines joined, blank lines left out. */
function commandsOf(lines: readonly string[]): string[] {
  const commands: string[] = [];
  let pending = '';
  for (const line of lines) {
    if (line.trimEnd().endsWith('\\')) {
      pending += `${line.trimEnd().slice(0, -1)} `;
      continue;
    }
    const command = (pending + line).trim();
    pending = '';
    if (command) commands.push(command);
  }
  return commands;
}

/** Runs one command in bash, in the project, with the given variables; its exit code and output. */
function runCommand(command: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('bash', ['-c', command], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), COMMAND_TIMEOUT_MS);
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, output });
    });
  });
}

/** What the tour asks the reader to fill in, learnt from what the commands print. */
const PLACEHOLDERS: readonly { readonly name: string; readonly printed: RegExp }[] = [
  { name: '<LoginId>', printed: /\(login ([0-9a-f-]{36})\)/ },
  { name: '<refreshId>', printed: /^started (\S+), a refresh of/m },
];

void describe("the README's five-minute tour, verbatim, on npm start's stack", () => {
  const runner = new DevStackRunner('readme-tour-');
  let stack: RunningStack;

  before(async () => {
    await runner.prepare();
    stack = await runner.start();
  });
  after(async () => {
    await stack?.stop();
    runner.cleanup();
  });

  void it('prints the banner the README shows, label for label', () => {
    const banner = fencedBlocks(tourSection()).find((block) => block.language === '');
    assert.ok(banner, 'the tour shows the banner');
    const labels = banner.lines.map((line) => /^ {2}(\S.*?)\s{2,}/.exec(line)?.[1]).filter((label): label is string => label !== undefined);
    assert.ok(labels.length >= 5, `the banner's labels: ${labels.join(', ')}`);
    for (const label of labels)
      assert.match(
        stack.output(),
        new RegExp(`^ {2}${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s{2,}`, 'm'),
        `the stack prints "${label}" as the README shows`,
      );
  });

  void it(
    'runs every command of the tour in order, each exiting 0, what it asks to fill in taken from what came before',
    { timeout: 20 * COMMAND_TIMEOUT_MS },
    async () => {
      const commands = fencedBlocks(tourSection())
        .filter((block) => block.language === 'sh')
        .flatMap((block) => commandsOf(block.lines));
      assert.ok(
        commands.some((command) => command.startsWith('npm run demo')) && commands.some((command) => command.includes('book report')),
        `the tour's commands: ${commands.join(' | ')}`,
      );
      // The second terminal: the stack's variables, and where its Temporal listens (README: Other ports).
      const env = { ...runner.env, TEMPORAL_ADDRESS: runner.temporalAddress };
      const learnt = new Map<string, string>();
      for (const written of commands) {
        let command = written;
        for (const [name, value] of learnt) command = command.replaceAll(name, value);
        const unfilled = /<[A-Za-z]+>/.exec(command.replace(/#.*$/, ''));
        assert.equal(unfilled, null, `"${written}" asks for ${unfilled?.[0]}, which no earlier command of the tour printed`);
        let { code, output } = await runCommand(command, env);
        // A report asked for before its refresh ended says so and how to follow it; the reader, told
        // that, asks again a little later (the README: "once progress says it ended").
        for (let attempt = 0; code !== 0 && /has not ended, so it has no report yet/.test(output) && attempt < 30; attempt += 1) {
          await new Promise((resolvePromise) => setTimeout(resolvePromise, 2_000));
          ({ code, output } = await runCommand(command, env));
        }
        assert.equal(code, 0, `"${command}" exited ${code}:\n${output}`);
        for (const { name, printed } of PLACEHOLDERS) {
          const value = printed.exec(output)?.[1];
          if (value) learnt.set(name, value);
        }
      }
    },
  );
});

/**
 * The CLI's command table and its dispatch, without a Temporal server: help made from the table,
 * groups of subcommands (here the real `list` and `show` put under a group), unknown names and
 * usage errors named by the command as typed. None of these reaches the pipeline client.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CommandTable } from '../../src/cli/command.js';
import { COMMANDS } from '../../src/cli/command-table.js';
import { list } from '../../src/cli/commands/list.js';
import { show } from '../../src/cli/commands/show.js';
import { EXIT_OK, EXIT_USAGE } from '../../src/cli/report.js';
import { runCli } from '../../src/cli/run-cli.js';

const GROUPED: CommandTable = {
  ...COMMANDS,
  connections: { summary: 'the connection commands, as a group', subcommands: { list, show } },
};

async function cli(args: string[], commands: CommandTable = COMMANDS): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(
    args,
    {
      out: (line) => out.push(line),
      err: (line) => err.push(line),
      readStdin: () => Promise.resolve(''),
      env: {},
      connect: () => Promise.reject(new Error('these invocations must not need the pipeline client')),
      now: () => 0,
      sleep: () => Promise.resolve(),
      program: 'connections',
    },
    commands,
  );
  return { code, out: out.join('\n'), err: err.join('\n') };
}

void describe('the CLI command table', () => {
  void it('lists every command of the table with its summary in the program help', async () => {
    const help = await cli(['help']);
    assert.equal(help.code, EXIT_OK);
    for (const [name, entry] of Object.entries(COMMANDS)) assert.match(help.out, new RegExp(`^  ${name} +${entry.summary.replace(/[()]/g, '\\$&')}$`, 'm'));
    assert.equal((await cli([])).code, EXIT_USAGE, 'no command at all is a usage error');
  });

  void it('prints a group its own help, listing its subcommands', async () => {
    for (const args of [
      ['connections', '--help'],
      ['help', 'connections'],
    ]) {
      const result = await cli(args, GROUPED);
      assert.equal(result.code, EXIT_OK, args.join(' '));
      assert.match(result.out, /^Usage: connections connections <command> \[options\]\n\nthe connection commands, as a group\n/);
      assert.match(result.out, /^ {2}list +connections by status/m);
      assert.match(result.out, /^ {2}show +one connection's state/m);
    }
    const bare = await cli(['connections'], GROUPED);
    assert.equal(bare.code, EXIT_USAGE);
    assert.match(bare.out, /^Usage: connections connections <command>/);
    assert.match((await cli(['help'], GROUPED)).out, /^ {2}connections +the connection commands, as a group$/m);
  });

  void it("runs a group's subcommand with the arguments after its name, and names it in usage errors", async () => {
    for (const args of [
      ['connections', 'show', '--help'],
      ['help', 'connections', 'show'],
    ]) {
      const result = await cli(args, GROUPED);
      assert.equal(result.code, EXIT_OK, args.join(' '));
      assert.match(result.out, /^Usage: connections show <workflowId>/);
    }
    const missing = await cli(['connections', 'show'], GROUPED);
    assert.equal(missing.code, EXIT_USAGE);
    assert.equal(missing.err, 'connections connections show: missing <workflowId>\nrun "connections connections show --help" for usage');
    const badFlag = await cli(['connections', 'list', '--bogus'], GROUPED);
    assert.equal(badFlag.code, EXIT_USAGE);
    assert.match(badFlag.err, /^connections connections list: Unknown option '--bogus'/);
  });

  void it('refuses a name the table or the group lacks, listing what it has', async () => {
    const inGroup = await cli(['connections', 'frobnicate'], GROUPED);
    assert.equal(inGroup.code, EXIT_USAGE);
    assert.equal(inGroup.err, 'unknown command "connections frobnicate"; commands: list, show (see connections connections --help)');
    // Names every object inherits are no commands.
    const inherited = await cli(['constructor']);
    assert.equal(inherited.code, EXIT_USAGE);
    assert.equal(
      inherited.err,
      'unknown command "constructor"; commands: list, show, answer, watch, activity, audit, login, whoami, logout, start, refresh, book, forget, tenant, deployment, budget, pipeline-key (see connections --help)',
    );
  });

  void it('names the flag in a usage error, before any connection is made', async () => {
    const result = await cli(['start', '--application-id', 'a1', '--bogus']);
    assert.equal(result.code, EXIT_USAGE);
    assert.match(result.err, /^connections start: Unknown option '--bogus'/);
    assert.match(result.err, /run "connections start --help" for usage$/);
    const missingValue = await cli(['watch', 'wf-1', '--interval']);
    assert.equal(missingValue.code, EXIT_USAGE);
    assert.match(missingValue.err, /^connections watch: Option '--interval <value>' argument missing/);
  });
});

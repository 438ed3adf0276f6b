#!/usr/bin/env node
/** Entry point of the operator CLI: `npm run cli -- <command> ...` (the commands are in command-table.ts). */
import { setTimeout as sleep } from 'node:timers/promises';
import { ConnectionsClient } from '../client/connections.js';
import { runCli } from './run-cli.js';

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('password: (input is echoed; prefer piping it) ');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

process.exitCode = await runCli(process.argv.slice(2), {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  readStdin,
  connect: (config) => ConnectionsClient.connect(config),
  now: () => Date.now(),
  sleep: (ms) => sleep(ms),
  program: 'npm run cli --',
});

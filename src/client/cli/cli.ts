/**
 * The operator CLI: `connections <list|show|answer|watch|start> ...`. Everything goes through the
 * pipeline client (`../connections.ts`); presentation is in `../presentation.ts`. `runCli` returns the
 * exit code (0 ok, 1 connection failed or answer rejected, 2 usage error) so tests can call it in-process.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { SecurityResponses } from '../../aggregator/schemas.js';
import { AttributePackageOperation } from '../../aggregator/schemas.js';
import { checkAnswer, describeProblems } from '../../workflows/challenges.js';
import type { ConnectionInputArgs } from '../../contract/connection-input.js';
import { CONNECTION_STATUSES } from '../../workflows/definitions.js';
import type { AnswerOutcome, ChallengeSet, ConnectionStatus } from '../../workflows/definitions.js';
import { connectionKey } from '../business-key.js';
import { connectionPasswordFromEnv as passwordFromEnv, loadClientConfig } from '../../config.js';
import type { ClientConfig } from '../../config.js';
import { isTerminalStatus } from '../connections.js';
import type { ConnectionsClient, ConnectionSummary } from '../connections.js';
import {
  AnswerRejectedError,
  ConnectionClientError,
  ConnectionFailedError,
  InvalidBusinessKeyError,
  InvalidConnectionInputError,
} from '../errors.js';
import { parseAnswerTokens, presentChallengeSet, presentState, printable, progressLine } from '../presentation.js';

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  readStdin(): Promise<string>;
  env: NodeJS.ProcessEnv;
  /** Opens the pipeline client (the CLI closes it when done). */
  connect(config: ClientConfig): Promise<ConnectionsClient>;
  now(): number;
  /** Between polls of `watch`. */
  sleep(ms: number): Promise<void>;
  /** Program name in help texts. */
  program?: string;
}

export class UsageError extends Error {
  override readonly name = 'UsageError';
  constructor(
    message: string,
    readonly command?: string,
  ) {
    super(message);
  }
}

const ENV_HELP = `Environment:
  TEMPORAL_ADDRESS        Temporal frontend (default localhost:7233)
  TEMPORAL_NAMESPACE      namespace (default "default")
  TEMPORAL_TASK_QUEUE     task queue of the connection worker (default aggregation-connections)
  AGGREGATOR_CUSTOMER_ID  tenant of new connections and of list (default demo-lender)
  PAYLOAD_ENCRYPTION_KEY  the worker's payload encryption key, when it has one (base64 of 32 bytes;
                          with PAYLOAD_ENCRYPTION_KEY_ID and PAYLOAD_DECRYPTION_KEYS as the worker's)`;

function helpTexts(program: string): Record<string, string> {
  return {
    main: `Usage: ${program} <command> [options]

Operate aggregation connections (Temporal workflows) from a terminal.

Commands:
  list     connections by status (default: those awaiting an answer)
  show     one connection's state and its challenges, numbered for answering
  answer   answer a connection's current challenge set
  watch    follow a connection's progress until it ends
  start    start a connection (live, cached or refresh)

Run "${program} <command> --help" for a command's options.
Exit codes: 0 ok, 1 connection failed or answer rejected, 2 usage error.

${ENV_HELP}`,
    list: `Usage: ${program} list [--status <status> | --all] [--customer <id>] [--institution <name>] [--login-id <id>] [--limit <n>] [--json]

Lists connections newest first through Temporal visibility (may lag a second behind).
  --status <status>     ${CONNECTION_STATUSES.join(', ')} (default AwaitingAnswer)
  --all                 any status
  --customer <id>       only this tenant (default: any)
  --institution <name>  only this institution
  --login-id <id>       only this login
  --limit <n>           at most n connections (default 50)
  --json                print JSON instead of a table`,
    show: `Usage: ${program} show <workflowId> [--images-dir <dir>] [--json]

Shows the connection's status and, when it awaits an answer, each challenge numbered as "answer"
expects: options numbered for MultipleChoice, MultipleChoiceMultipleAnswers and questions to choose,
phone options for TextOrCall, a note for trusted-device approval, and for ImageSelection the 16
images saved as PNG files (numbered 01-16) whose paths are printed.
  --images-dir <dir>    where to save ImageSelection images (default: a new temporary directory)
  --json                print the raw state as JSON`,
    answer: `Usage: ${program} answer <workflowId> [--set <challengeSetId>] [--dry-run] <answer>...
       ${program} answer <workflowId> [--set <challengeSetId>] --prompt <text> --value <answer> [--value <answer>]...

Answers the current challenge set: one <answer> per challenge, in the order "show" numbers them.
  QuestionAndAnswer                  the text                         "Montreal"
  QuestionAndAnswer (choose question) question number:answer          2:Rex
  MultipleChoice                     option number or exact text      3
  MultipleChoiceMultipleAnswers      option numbers, comma-separated  1,4
  TextOrCall                         phone number[:text|:call]        1:call  (text if omitted)
  WaitUntilEUAccept                  verified                         verified
  ImageSelection                     image number                     7
Or give raw SecurityResponses: each --prompt (exact prompt text; for TextOrCall the phone option)
followed by its --value(s). Put "--" before answers that begin with "-".

The answer is checked before it is sent (and again by the workflow); a refused answer names the
problem and exits 1 without reaching the service. Exit 1 also when the service rejects it.
  --set <id>    the challenge set you are answering (from "show"): refused if it changed since
  --dry-run     check the answer and print the SecurityResponses it becomes, without sending`,
    watch: `Usage: ${program} watch <workflowId> [--interval <ms>]

Follows a connection: prints a line (elapsed, status, polls, pending operation, challenge) whenever
something changes, until the connection ends. Exit 0 when it completed, 1 when it failed.
  --interval <ms>   how often to look (default 1000)`,
    start: `Usage: ${program} start (--application-id <id> | --key <businessKey>) [session] [products] [--customer <id>] [--no-wait] [--rerun never|if-failed|always]

Starts a connection (or finds the one already running under the same key) and waits for its first
step: the first challenges to answer, an open session, or its end.
Session (one of):
  --institution <name> --username <name> [--password-stdin] [--no-save]
                        live: the password is read from stdin with --password-stdin, else from
                        the CONNECTION_PASSWORD environment variable (never from a flag)
  --login-id <uuid>     cached: data of an earlier session
  --login-id <uuid> --refresh
                        refresh a saved login live
Products (at least one):
  --accounts            accounts detail with identity, balances and transactions
  --days 90|365         days of transactions (default 90)
  --investments         investments
  --attributes <op>     an attributes package: ${AttributePackageOperation.options.join(', ')}
Other:
  --customer <id>       tenant (default AGGREGATOR_CUSTOMER_ID)
  --application-id <id> business key becomes connection-<customer>:<id>
  --key <key>           the business key itself
  --no-wait             return once started instead of waiting for the first step
  --rerun <policy>      when the key's earlier connection ended: never, if-failed (default), always`,
  };
}

/** Runs one CLI invocation; returns the exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const program = io.program ?? 'connections';
  const help = helpTexts(program);
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    const topic = command === 'help' ? rest[0] : undefined;
    io.out(topic !== undefined && topic in help ? (help[topic] ?? help.main ?? '') : (help.main ?? ''));
    return command === undefined ? EXIT_USAGE : EXIT_OK;
  }
  const run = COMMANDS[command];
  if (run === undefined) {
    io.err(`unknown command "${command}"; commands: ${Object.keys(COMMANDS).join(', ')} (see ${program} --help)`);
    return EXIT_USAGE;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.out(help[command] ?? '');
    return EXIT_OK;
  }
  let client: ConnectionsClient | undefined;
  try {
    const context: Context = {
      io,
      get config() {
        return loadClientConfig(io.env);
      },
      client: async () => (client ??= await io.connect(loadClientConfig(io.env))),
    };
    return await run(rest, context);
  } catch (error) {
    return reportError(error, command, io, program);
  } finally {
    await client?.close();
  }
}

interface Context {
  readonly io: CliIo;
  readonly config: ClientConfig;
  readonly client: () => Promise<ConnectionsClient>;
}

type Command = (args: readonly string[], context: Context) => Promise<number>;

const COMMANDS: Record<string, Command> = { list, show, answer, watch, start };

function reportError(error: unknown, command: string, io: CliIo, program: string): number {
  if (error instanceof UsageError) {
    io.err(`${program} ${command}: ${error.message}`);
    io.err(`run "${program} ${command} --help" for usage`);
    return EXIT_USAGE;
  }
  if (error instanceof InvalidConnectionInputError || error instanceof InvalidBusinessKeyError) {
    io.err(`${program} ${command}: ${error.message}`);
    return EXIT_USAGE;
  }
  if (error instanceof AnswerRejectedError) {
    io.err(`answer refused (${error.source === 'client' ? 'checked before sending' : "by the workflow's validator"}): ${printable(error.problem)}`);
    io.err('nothing was sent to the service; run "show" to see the challenges again');
    return EXIT_FAILED;
  }
  if (error instanceof ConnectionClientError) {
    io.err(`${program} ${command}: ${printable(error.message)}`);
    return EXIT_FAILED;
  }
  // parseArgs' own errors (unknown option, missing value) are usage errors.
  if (error instanceof TypeError && 'code' in error && typeof error.code === 'string' && error.code.startsWith('ERR_PARSE_ARGS')) {
    io.err(`${program} ${command}: ${error.message}`);
    io.err(`run "${program} ${command} --help" for usage`);
    return EXIT_USAGE;
  }
  io.err(`${program} ${command}: ${error instanceof Error ? error.message : String(error)}`);
  return EXIT_FAILED;
}

function onePositional(positionals: readonly string[], what: string, command: string): string {
  const [value, ...extra] = positionals;
  if (value === undefined) throw new UsageError(`missing ${what}`, command);
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0] ?? ''}"`, command);
  return value;
}

// ---------------------------------------------------------------------------------------------

async function list(args: readonly string[], { io, client }: Context): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: {
      status: { type: 'string' },
      all: { type: 'boolean' },
      customer: { type: 'string' },
      institution: { type: 'string' },
      'login-id': { type: 'string' },
      limit: { type: 'string' },
      json: { type: 'boolean' },
    },
    allowPositionals: true,
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0] ?? ''}"`, 'list');
  if (values.all && values.status !== undefined) throw new UsageError('--all and --status exclude each other', 'list');
  const status = values.all ? undefined : (values.status ?? 'AwaitingAnswer');
  if (status !== undefined && !(CONNECTION_STATUSES as readonly string[]).includes(status)) {
    throw new UsageError(`--status must be one of ${CONNECTION_STATUSES.join(', ')} (got "${status}")`, 'list');
  }
  const limit = values.limit === undefined ? 50 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError('--limit must be a whole number from 1 to 1000', 'list');
  const connections = await (await client()).list({
    status: status as ConnectionStatus | undefined,
    customerId: values.customer,
    institution: values.institution,
    loginId: values['login-id'],
    limit,
  });
  if (values.json) {
    io.out(JSON.stringify(connections, null, 2));
    return EXIT_OK;
  }
  if (connections.length === 0) {
    io.out(`no connections${status ? ` with status ${status}` : ''}`);
    return EXIT_OK;
  }
  for (const line of table(connections)) io.out(line);
  return EXIT_OK;
}

function table(connections: readonly ConnectionSummary[]): string[] {
  // Visibility can list workflows this project did not start: every cell is made printable.
  const rows = connections.map((c) => [c.workflowId, c.status ?? `(${c.executionStatus})`, c.institution ?? c.loginId ?? '', c.customerId ?? '', c.startedAt].map(printable));
  const header = ['WORKFLOW ID', 'STATUS', 'INSTITUTION / LOGIN', 'CUSTOMER', 'STARTED'];
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => (row[i] ?? '').length)));
  const format = (row: readonly string[]) => row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  return [format(header), ...rows.map(format)];
}

// ---------------------------------------------------------------------------------------------

async function show(args: readonly string[], { io, client }: Context): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: { 'images-dir': { type: 'string' }, json: { type: 'boolean' } },
    allowPositionals: true,
  });
  const workflowId = onePositional(positionals, '<workflowId>', 'show');
  const state = await (await client()).getState(workflowId);
  if (values.json) {
    io.out(JSON.stringify(state, null, 2));
    return EXIT_OK;
  }
  for (const line of presentState(workflowId, state, io.now())) io.out(line);
  if (state.status === 'AwaitingAnswer' && state.challengeSet) {
    io.out('');
    await printChallengeSet(io, workflowId, state.challengeSet, values['images-dir']);
  }
  return EXIT_OK;
}

async function printChallengeSet(io: CliIo, workflowId: string, set: ChallengeSet, imagesDir: string | undefined): Promise<void> {
  const imagePaths = await saveImages(set, imagesDir);
  const answerCommand = `${io.program ?? 'connections'} answer ${workflowId} --set ${set.id}`;
  for (const line of presentChallengeSet(set, { imagePaths, now: io.now(), answerCommand })) io.out(line);
}

/** Writes the images of each ImageSelection challenge as PNG files; returns their paths by challenge index. */
async function saveImages(set: ChallengeSet, dir: string | undefined): Promise<Map<number, string[]>> {
  const paths = new Map<number, string[]>();
  const indexes = set.challenges.flatMap((challenge, index) => (challenge.Type === 'ImageSelection' ? [index] : []));
  if (indexes.length === 0) return paths;
  const base = dir ?? (await mkdtemp(join(tmpdir(), `challenge-set-${set.id.replace(/[^A-Za-z0-9_-]/g, '_')}-`)));
  await mkdir(base, { recursive: true });
  for (const index of indexes) {
    const images = set.challenges[index]?.Iterables ?? [];
    const files: string[] = [];
    for (const [i, image] of images.entries()) {
      const file = join(base, `challenge-${index + 1}-image-${String(i + 1).padStart(2, '0')}.png`);
      const base64 = image.replace(/^data:image\/[a-z+]+;base64,/i, '');
      await writeFile(file, Buffer.from(base64, 'base64'));
      files.push(file);
    }
    paths.set(index, files);
  }
  return paths;
}

// ---------------------------------------------------------------------------------------------

async function answer(args: readonly string[], { io, client }: Context): Promise<number> {
  const { values, positionals, tokens } = parseArgs({
    args: [...args],
    options: {
      set: { type: 'string' },
      prompt: { type: 'string', multiple: true },
      value: { type: 'string', multiple: true },
      'dry-run': { type: 'boolean' },
    },
    allowPositionals: true,
    tokens: true,
  });
  const [workflowId, ...answerTokens] = positionals;
  if (workflowId === undefined) throw new UsageError('missing <workflowId>', 'answer');
  const raw = (values.prompt?.length ?? 0) > 0 || (values.value?.length ?? 0) > 0;
  if (raw && answerTokens.length > 0) throw new UsageError('give either positional answers or --prompt/--value pairs, not both', 'answer');
  if (!raw && answerTokens.length === 0) throw new UsageError('missing answers: one per challenge (see "show"), or --prompt/--value pairs', 'answer');
  const responses = raw ? responsesFromPairs(tokens) : undefined;

  const connections = await client();
  const state = await connections.getState(workflowId);
  const set = state.challengeSet;
  if (state.status !== 'AwaitingAnswer' || set === undefined) {
    throw new AnswerRejectedError(workflowId, 'client', `the connection is not awaiting an answer (status ${state.status})`, values.set);
  }
  if (values.set !== undefined && values.set !== set.id) {
    throw new AnswerRejectedError(workflowId, 'client', `challenge set ${values.set} is no longer current (now ${set.id}); run "show" and answer the new challenges`, values.set);
  }
  let chosen: SecurityResponses;
  if (responses) chosen = responses;
  else {
    const parsed = parseAnswerTokens(set.challenges, answerTokens);
    if (!parsed.ok) throw new AnswerRejectedError(workflowId, 'client', parsed.problems.join('; '), set.id);
    chosen = parsed.responses;
  }
  if (values['dry-run']) {
    io.out(`would answer challenge set ${set.id} with:`);
    io.out(JSON.stringify(chosen, (_key, value: unknown) => (typeof value === 'string' && value.length > 80 ? `${value.slice(0, 40)}...(${value.length} chars)` : value), 2));
  }
  const problems = checkAnswer(set.challenges, chosen);
  if (problems.length) throw new AnswerRejectedError(workflowId, 'client', describeProblems(problems), set.id);
  if (values['dry-run']) {
    io.out('the answer fits the challenges (not sent: --dry-run)');
    return EXIT_OK;
  }
  // Checked above against the state just read: the client need not query and check it again.
  const outcome = await connections.answer(workflowId, { challengeSetId: set.id, responses: chosen }, { checkLocally: false });
  return printOutcome(io, workflowId, outcome);
}

/** `--prompt A --value 1 --value 2 --prompt B --value 3` → { A: ['1','2'], B: ['3'] } (order of the command line). */
export function responsesFromPairs(tokens: ReadonlyArray<{ kind: string; name?: string; value?: string | undefined }>): SecurityResponses {
  const responses: SecurityResponses = {};
  let current: string | undefined;
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    if (token.name === 'prompt') {
      if (token.value === undefined || token.value === '') throw new UsageError('--prompt needs the exact prompt text', 'answer');
      if (Object.hasOwn(responses, token.value)) throw new UsageError(`--prompt "${token.value}" is given twice`, 'answer');
      current = token.value;
      responses[current] = [];
    } else if (token.name === 'value') {
      if (current === undefined) throw new UsageError('--value must follow the --prompt it answers', 'answer');
      responses[current]?.push(token.value ?? '');
    }
  }
  for (const [prompt, answers] of Object.entries(responses)) {
    if (answers.length === 0) throw new UsageError(`--prompt "${prompt}" has no --value`, 'answer');
  }
  return responses;
}

function printOutcome(io: CliIo, workflowId: string, outcome: AnswerOutcome): number {
  switch (outcome.outcome) {
    case 'accepted':
      io.out(`answer accepted; the connection is now ${outcome.status}`);
      if (outcome.nextChallengeSet) {
        io.out('');
        io.out('The service asks more:');
        for (const line of presentChallengeSet(outcome.nextChallengeSet, { now: io.now(), answerCommand: `${io.program ?? 'connections'} answer ${workflowId} --set ${outcome.nextChallengeSet.id}` })) io.out(line);
        if (outcome.nextChallengeSet.challenges.some((c) => c.Type === 'ImageSelection')) io.out(`(run "show ${workflowId}" to save the images)`);
      }
      return EXIT_OK;
    case 'rejected':
      io.err(`the service rejected the answer${outcome.serviceCode ? ` [${outcome.serviceCode}]` : ''}: ${printable(outcome.message)}`);
      if (outcome.nextChallengeSet) io.err(`the same challenges are presented again as set ${outcome.nextChallengeSet.id}; run "show ${workflowId}"`);
      return EXIT_FAILED;
    case 'restarted':
      // The answer may or may not have reached the service: it was not sent again.
      io.err(`the service's verdict on the answer is unknown (${printable(outcome.reason)}); a new session was opened`);
      if (outcome.nextChallengeSet) io.err(`its challenges are presented as set ${outcome.nextChallengeSet.id}: ask the end user again and run "show ${workflowId}"`);
      else io.err(`it opened without challenges; the connection is now ${outcome.status}`);
      return outcome.nextChallengeSet ? EXIT_FAILED : EXIT_OK;
    case 'ended':
      if (outcome.status === 'Completed') {
        io.out('the connection completed');
        return EXIT_OK;
      }
      io.err(`the connection ended: ${outcome.status}${outcome.failure ? ` (${outcome.failure.type}: ${printable(outcome.failure.message)})` : ''}`);
      return EXIT_FAILED;
  }
}

// ---------------------------------------------------------------------------------------------

async function watch(args: readonly string[], { io, client }: Context): Promise<number> {
  const { values, positionals } = parseArgs({ args: [...args], options: { interval: { type: 'string' } }, allowPositionals: true });
  const workflowId = onePositional(positionals, '<workflowId>', 'watch');
  const interval = values.interval === undefined ? 1000 : Number(values.interval);
  if (!Number.isInteger(interval) || interval < 50 || interval > 60_000) throw new UsageError('--interval must be milliseconds from 50 to 60000', 'watch');
  const connections = await client();
  // The result long-polls Temporal and settles when the workflow closes, however it closes.
  let ended: { ok: true } | { ok: false; error: unknown } | undefined;
  const result = connections.result(workflowId).then(
    () => (ended = { ok: true }),
    (error: unknown) => (ended = { ok: false, error }),
  );
  let last = '';
  for (;;) {
    let state;
    try {
      state = await connections.getState(workflowId);
    } catch (error) {
      if (ended) break;
      throw error;
    }
    const key = JSON.stringify([state.status, state.totalPolls, state.pending?.pollCount, state.pending?.operation, state.challengeSet?.id, state.retrieved]);
    if (key !== last) {
      io.out(progressLine(state, io.now()));
      last = key;
    }
    if (ended || isTerminalStatus(state.status)) break;
    await Promise.race([io.sleep(interval), result]);
  }
  await result;
  const outcome = ended as { ok: true } | { ok: false; error: unknown };
  if (outcome.ok) {
    io.out(`connection ${workflowId} completed`);
    return EXIT_OK;
  }
  if (outcome.error instanceof ConnectionFailedError) {
    io.err(`connection ${workflowId} ended: ${outcome.error.type}${outcome.error.serviceCode ? ` [${outcome.error.serviceCode}]` : ''}: ${printable(outcome.error.reason)}`);
    return EXIT_FAILED;
  }
  throw outcome.error;
}

// ---------------------------------------------------------------------------------------------

async function start(args: readonly string[], context: Context): Promise<number> {
  const { io, client } = context;
  const { values, positionals } = parseArgs({
    args: [...args],
    options: {
      'application-id': { type: 'string' },
      key: { type: 'string' },
      customer: { type: 'string' },
      institution: { type: 'string' },
      username: { type: 'string' },
      'password-stdin': { type: 'boolean' },
      'no-save': { type: 'boolean' },
      'login-id': { type: 'string' },
      refresh: { type: 'boolean' },
      accounts: { type: 'boolean' },
      days: { type: 'string' },
      investments: { type: 'boolean' },
      attributes: { type: 'string' },
      'no-wait': { type: 'boolean' },
      rerun: { type: 'string' },
    },
    allowPositionals: true,
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0] ?? ''}"`, 'start');
  const customerId = values.customer ?? context.config.customerId;
  if ((values['application-id'] === undefined) === (values.key === undefined)) throw new UsageError('give exactly one of --application-id and --key', 'start');
  const key = values.key ?? connectionKey(customerId, values['application-id'] ?? '');

  let session: ConnectionInputArgs['session'];
  const live = values.institution !== undefined || values.username !== undefined;
  if (live && values['login-id'] !== undefined) throw new UsageError('give either --institution/--username (live) or --login-id (cached/refresh), not both', 'start');
  if (live) {
    if (values.institution === undefined || values.username === undefined) throw new UsageError('a live connection needs --institution and --username', 'start');
    const password = values['password-stdin'] ? (await io.readStdin()).replace(/\r?\n$/, '') : passwordFromEnv(io.env);
    if (!password) throw new UsageError('no password: pipe it with --password-stdin or set CONNECTION_PASSWORD', 'start');
    session = { kind: 'live', institution: values.institution, username: values.username, password, save: !values['no-save'] };
  } else if (values['login-id'] !== undefined) {
    session = { kind: values.refresh ? 'refresh' : 'cached', loginId: values['login-id'] };
  } else {
    throw new UsageError('missing session: --institution and --username (live), or --login-id (cached)', 'start');
  }

  const products: ConnectionInputArgs['products'] = {};
  if (values.days !== undefined && !values.accounts) throw new UsageError('--days applies to --accounts', 'start');
  if (values.days !== undefined && values.days !== '90' && values.days !== '365') throw new UsageError('--days must be 90 or 365', 'start');
  if (values.accounts) {
    products.accountsDetail = { WithAccountIdentity: true, WithBalance: true, WithTransactions: true, DaysOfTransactions: values.days === '365' ? 'Days365' : 'Days90' };
  }
  if (values.investments) products.investments = true;
  if (values.attributes !== undefined) {
    const operation = AttributePackageOperation.safeParse(values.attributes);
    if (!operation.success) throw new UsageError(`--attributes must be one of ${AttributePackageOperation.options.join(', ')}`, 'start');
    products.attributes = { package: operation.data };
  }
  if (!products.accountsDetail && !products.investments && !products.attributes) throw new UsageError('choose at least one product: --accounts, --investments, --attributes <op>', 'start');
  const rerun = values.rerun ?? 'if-failed';
  if (rerun !== 'never' && rerun !== 'if-failed' && rerun !== 'always') throw new UsageError('--rerun must be never, if-failed or always', 'start');

  const input: ConnectionInputArgs = { customerId, session, products };
  const connections = await client();
  if (values['no-wait']) {
    await connections.start(key, input, { rerun });
    io.out(`started ${key}`);
    return EXIT_OK;
  }
  const step = await connections.startAndAwaitFirstStep(key, input, { rerun });
  io.out(`connection ${step.workflowId}`);
  switch (step.step) {
    case 'challenge':
      io.out('');
      await printChallengeSet(io, step.workflowId, step.challengeSet, undefined);
      return EXIT_OK;
    case 'session-open':
      io.out(`session open (login ${step.loginId}); retrieving data: "watch ${step.workflowId}" to follow`);
      return EXIT_OK;
    case 'ended':
      if (step.status === 'Completed') {
        io.out('the connection already completed');
        return EXIT_OK;
      }
      io.err(`the connection ended: ${step.status}${step.failure ? ` (${step.failure.type}${step.failure.serviceCode ? ` [${step.failure.serviceCode}]` : ''}: ${printable(step.failure.message)})` : ''}`);
      return EXIT_FAILED;
  }
}

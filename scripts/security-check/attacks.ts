/**
 * The attacks security:check tries, each as an attacker would, each judged refused or got through:
 * messages written to Temporal without the key (a client with the SDK's default converter), a worker
 * pointed at a KMS in clear, and secrets searched for where they must never be (argv, logs, history).
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { decodeOptionalFailureToOptionalError } from '../../src/sdk/internals.js';
import proto from '@temporalio/proto';
import { ConnectionFailedError, loadClientConfig, type ConnectionsClient } from '../../src/client/index.js';
import { EncryptionCodec } from '../../src/codec/encryption-codec.js';
import { keySourceFor } from '../../src/codec/key-provider.js';
import { SealingStoppedError } from '../../src/codec/payload-errors.js';
import {
  CONNECTION_WORKFLOW_TYPE,
  answerChallengeSignal,
  submitAnswerUpdate,
  type ConnectionState,
} from '../../src/contract/connection/connection-definitions.js';
import { bookRefreshRunId } from '../../src/contract/book/book-definitions.js';
import type { ConnectionInputArgs } from '../../src/contract/connection/connection-input.js';
import { SANDBOX_PASSWORD, SCENARIOS, describeScenario } from '../../sandbox/scenarios.js';
import { track } from '../chaos/processes.js';

const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const WORKER_ENTRY = fileURLToPath(new URL('../../src/worker.ts', import.meta.url));
const STATE_WAIT_MS = 60_000;
/** A worker refusing its settings exits at once; one still running after this took them. */
const REFUSAL_WAIT_MS = 60_000;

export interface AttackResult {
  readonly name: string;
  readonly refused: boolean;
  /** What was seen: the refusal's reason, or how it got through. */
  readonly detail: string;
}

/** What the message attacks need: the product's (sealed) client, and one without the key. */
export interface MessageTarget {
  readonly connections: ConnectionsClient;
  /** The Temporal client under `connections`, with the product's converter: reads what the worker sealed. */
  readonly sealed: Client;
  /** The SDK's default converter, no codec: anyone who can call Temporal. */
  readonly raw: Client;
  readonly taskQueue: string;
  readonly customerId: string;
}

const scenario = SCENARIOS.find((entry) => entry.username === 'security_question');
if (!scenario) throw new Error('the sandbox has no security_question scenario');
const firstRound = describeScenario(scenario).challengeSequence[0];
if (!firstRound) throw new Error('security_question asks no challenge');
/** The right answer: refused only because it is not sealed. */
export const RIGHT_ANSWER = { challengeSetId: '1', responses: firstRound.answer };

export function liveInput(customerId: string): ConnectionInputArgs {
  return {
    customerId,
    session: { kind: 'live', institution: scenario!.institution, username: scenario!.username, password: SANDBOX_PASSWORD },
    products: { accountsDetail: {} },
  };
}

export async function until<T>(read: () => Promise<T | undefined>, what: string, timeoutMs = STATE_WAIT_MS): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`security-check: ${what} did not happen within ${timeoutMs / 1000} s`);
    await delay(200);
  }
}

/** Starts a sealed connection and waits for its first challenge. */
export async function awaitingAnswer(target: MessageTarget, key: string): Promise<string> {
  const { workflowId } = await target.connections.start(`connection-${target.customerId}:${key}`, liveInput(target.customerId));
  await until(async () => ((await target.connections.getState(workflowId)).status === 'AwaitingAnswer' ? true : undefined), `${workflowId} awaiting an answer`);
  return workflowId;
}

/** The right answer as a signal without the key: refused when recorded as a rejection naming it, and not applied. */
export async function unsealedSignal(target: MessageTarget, workflowId: string): Promise<AttackResult> {
  const name = 'unsealed signal (the right answer, without the key)';
  await target.raw.workflow.getHandle(workflowId).signal(answerChallengeSignal, RIGHT_ANSWER);
  const state: ConnectionState = await until(async () => {
    const read = await target.connections.getState(workflowId);
    return read.lastRejection !== undefined || read.status !== 'AwaitingAnswer' ? read : undefined;
  }, `${workflowId} reacting to the unsealed signal`);
  const reason = state.lastRejection?.message ?? '';
  const refused = state.status === 'AwaitingAnswer' && /payload not sealed/.test(reason);
  return { name, refused, detail: refused ? `recorded as a rejection: ${reason.slice(0, 120)}` : `status ${state.status}, rejection "${reason}"` };
}

/**
 * The right answer as an update without the key: refused when the worker fails the update naming it
 * (its failure is sealed: read with the product's converter) and the connection still waits.
 */
export async function unsealedUpdate(target: MessageTarget, workflowId: string): Promise<AttackResult> {
  const name = 'unsealed update (the right answer, without the key)';
  const plain = defaultPayloadConverter.toPayload(RIGHT_ANSWER);
  const response = await target.raw.workflowService.updateWorkflowExecution({
    namespace: target.raw.options.namespace,
    workflowExecution: { workflowId },
    request: { meta: { updateId: randomUUID(), identity: 'security-check attacker' }, input: { name: submitAnswerUpdate.name, args: { payloads: [plain] } } },
    waitPolicy: { lifecycleStage: proto.temporal.api.enums.v1.UpdateWorkflowExecutionLifecycleStage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_COMPLETED },
  });
  const failure = await decodeOptionalFailureToOptionalError(target.sealed.options.loadedDataConverter, response.outcome?.failure, {
    namespace: target.sealed.options.namespace,
    workflowId,
  });
  const state = await target.connections.getState(workflowId);
  const refused = failure !== undefined && /payload not sealed/.test(failure.message) && state.status === 'AwaitingAnswer';
  return {
    name,
    refused,
    detail: refused
      ? `failed before it was recorded: ${failure.message.slice(0, 120)}`
      : `outcome ${failure ? `failure "${failure.message}"` : 'success'}, status ${state.status}`,
  };
}

/**
 * Starts a connection with `input` through `client` and waits for its end: refused when it fails as
 * InvalidConnectionInput with a reason that matches `names` (the worker's first step refuses it,
 * before anything is called or signalled).
 */
async function startRefusedAsInvalidInput(
  name: string,
  target: MessageTarget,
  client: Client,
  key: string,
  input: unknown,
  names: RegExp,
): Promise<AttackResult> {
  const workflowId = `connection-${target.customerId}:${key}`;
  await client.workflow.start(CONNECTION_WORKFLOW_TYPE, { taskQueue: target.taskQueue, workflowId, args: [input] });
  const ended = await target.connections.result(workflowId).then(
    (result) => `completed (${result.accountsDetail ? 'with data' : 'no data'})`,
    (error: unknown) => error,
  );
  const refused = ended instanceof ConnectionFailedError && ended.type === 'InvalidConnectionInput' && names.test(ended.reason);
  return { name, refused, detail: refused ? `failed: ${ended.reason.slice(0, 140)}` : `ended: ${ended instanceof Error ? ended.message : String(ended)}` };
}

/** A start whose input is not sealed: refused when the connection fails as InvalidConnectionInput naming it. */
export async function unsealedStart(target: MessageTarget, key: string): Promise<AttackResult> {
  return startRefusedAsInvalidInput('unsealed start input', target, target.raw, key, liveInput(target.customerId), /payload not sealed/);
}

/**
 * A connection whose input names another tenant's book refresh, sealed with the product's own client
 * (a pipeline of tenant A hoping its connection's end feeds B's refresh): the worker's validation
 * refuses it as its first step, naming the field, before anything is called or signalled.
 */
export async function connectionNamingAnotherTenantsBook(target: MessageTarget, key: string, otherTenant: string): Promise<AttackResult> {
  const input = { ...liveInput(target.customerId), book: { refreshWorkflowId: bookRefreshRunId(otherTenant, 'nightly', new Date('2026-11-29T02:00:00Z')) } };
  return startRefusedAsInvalidInput("a connection input naming another tenant's book refresh", target, target.sealed, key, input, /book\.refreshWorkflowId/);
}

/**
 * A worker given a KMS address in clear on another machine: refused when it exits before it starts,
 * naming the variable, and without printing the token it was given.
 */
export async function kmsInClear(name: string, env: Readonly<Record<string, string>>, variable: string, token: string): Promise<AttackResult> {
  const child = track(
    spawn(process.execPath, ['--import', 'tsx', WORKER_ENTRY], {
      cwd: PROJECT_ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exit = await Promise.race([
    new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code))),
    delay(REFUSAL_WAIT_MS).then(() => 'running' as const),
  ]);
  if (exit === 'running') child.kill('SIGKILL');
  const named = new RegExp(`${variable}: is http:// to `).test(output);
  const refused = exit !== 'running' && exit !== 0 && named && !output.includes(token);
  const detail = refused
    ? `the worker exited ${String(exit)} before it started: ${(/(\S+: is http:\/\/[^;]*)/.exec(output)?.[1] ?? '').slice(0, 120)}`
    : exit === 'running'
      ? `the worker was still running after ${REFUSAL_WAIT_MS / 1000} s`
      : `exit ${String(exit)}, variable named: ${named}, token printed: ${output.includes(token)}`;
  return { name, refused, detail };
}

/** Secrets searched for in some text (argv, a log, a history's bytes): refused when none is there. */
export function secretsAbsent(
  name: string,
  haystacks: readonly { readonly where: string; readonly bytes: Buffer }[],
  secrets: readonly { readonly label: string; readonly value: string }[],
): AttackResult {
  const found = haystacks.flatMap(({ where, bytes }) => secrets.filter(({ value }) => bytes.includes(value)).map(({ label }) => `${label} in ${where}`));
  return {
    name,
    refused: found.length === 0,
    detail: found.length === 0 ? `none of ${secrets.map(({ label }) => label).join(', ')} in ${haystacks.length} place(s)` : found.slice(0, 5).join('; '),
  };
}

/** A process's command line, as `ps` shows it to any user of the machine. */
export async function argvOf(pid: number): Promise<Buffer> {
  return readFile(`/proc/${pid}/cmdline`).catch(() => Buffer.alloc(0));
}

/**
 * A KMS outage used to seal without end under one data key: refused when a process whose key is spent
 * seals at most PAYLOAD_DATA_KEY_OUTAGE_MAX_USES more, then stops with SealingStoppedError. `stopKms`
 * takes the KMS down after the first data key was made.
 */
export async function outageSealCap(env: Readonly<Record<string, string>>, stopKms: () => Promise<void>): Promise<AttackResult> {
  const name = 'sealing without end through a KMS outage';
  const outageUses = 3;
  const config = loadClientConfig({ ...env, PAYLOAD_DATA_KEY_MAX_USES: '1', PAYLOAD_DATA_KEY_OUTAGE_MAX_USES: String(outageUses) });
  if (!config.encryption) return { name, refused: false, detail: 'encryption is off' };
  const codec = new EncryptionCodec(keySourceFor(config.encryption));
  const seal = () => codec.encode([defaultPayloadConverter.toPayload('sealed in an outage')]);
  await seal();
  await stopKms();
  let sealed = 0;
  let stoppedBy: unknown;
  while (sealed <= outageUses + 1 && stoppedBy === undefined) {
    try {
      await seal();
      sealed += 1;
    } catch (error) {
      stoppedBy = error;
    }
  }
  if (stoppedBy instanceof SealingStoppedError && sealed === outageUses) {
    return { name, refused: true, detail: `${sealed} sealed in the outage, then ${stoppedBy.name}: ${stoppedBy.message.slice(0, 100)}` };
  }
  return { name, refused: false, detail: `${sealed} sealed in the outage; then ${String(stoppedBy)}` };
}

/**
 * A payload forged through the console's codec endpoint with a credential that may only read: the
 * codec token (as a bearer, and in the address as earlier builds took it) and the console token.
 * Refused when none gets a sealed payload back.
 */
export async function forgedThroughCodec(
  consoleUrl: string,
  { consoleToken, codecToken }: { consoleToken: string; codecToken: string },
): Promise<AttackResult> {
  const name = 'a payload forged through the codec endpoint (codec token, console token)';
  const injected = defaultPayloadConverter.toPayload(RIGHT_ANSWER);
  const body = JSON.stringify({
    payloads: [
      {
        metadata: { encoding: Buffer.from(injected.metadata?.encoding ?? new Uint8Array()).toString('base64') },
        data: Buffer.from(injected.data ?? new Uint8Array()).toString('base64'),
      },
    ],
  });
  const tries: { with: string; url: string; headers: Record<string, string> }[] = [
    { with: 'the codec token', url: `${consoleUrl}/codec/encode`, headers: { authorization: `Bearer ${codecToken}` } },
    { with: 'the codec token in the address', url: `${consoleUrl}/codec/${codecToken}/encode`, headers: {} },
    { with: 'the console token', url: `${consoleUrl}/codec/encode`, headers: { authorization: `Bearer ${consoleToken}` } },
  ];
  const answers: string[] = [];
  let sealed = 0;
  for (const attempt of tries) {
    const response = await fetch(attempt.url, { method: 'POST', headers: { 'content-type': 'application/json', ...attempt.headers }, body });
    const text = await response.text();
    if (response.ok || text.includes(Buffer.from('binary/encrypted').toString('base64'))) sealed += 1;
    answers.push(`${attempt.with}: HTTP ${response.status}`);
  }
  return { name, refused: sealed === 0, detail: `${answers.join(', ')}${sealed > 0 ? `; ${sealed} sealed payload(s) made` : ''}` };
}

/**
 * The codec token (CONSOLE_CODEC_TOKEN) used as a console credential: it decodes and must open no
 * page or API route, whose holders could answer challenges, read results or forget a lender.
 */
export async function codecTokenOnConsole(consoleUrl: string, codecToken: string): Promise<AttackResult> {
  const name = 'the codec token used on the console (its API and pages)';
  const answers: string[] = [];
  let opened = 0;
  for (const path of ['/api/connections', '/api/books', '/']) {
    const response = await fetch(`${consoleUrl}${path}`, { headers: { authorization: `Bearer ${codecToken}` } });
    await response.body?.cancel();
    if (response.status !== 401) opened += 1;
    answers.push(`${path}: HTTP ${response.status}`);
  }
  return { name, refused: opened === 0, detail: answers.join(', ') };
}

/**
 * The right answer sealed with another tenant's key (its writer's credentials, in that tenant's
 * context) and signalled into this connection as raw payloads: refused when recorded as a rejection
 * naming the other tenant, and not applied. A tenant's key writes into its own work only.
 */
export async function otherTenantsSealedSignal(
  target: MessageTarget,
  workflowId: string,
  sealAs: { codec: EncryptionCodec; workflowId: string },
): Promise<AttackResult> {
  const name = "another tenant's sealed signal (the right answer, sealed with that tenant's key)";
  const payloads = await sealAs.codec.encode([defaultPayloadConverter.toPayload(RIGHT_ANSWER)], {
    type: 'workflow',
    namespace: target.raw.options.namespace,
    workflowId: sealAs.workflowId,
  });
  await target.raw.workflowService.signalWorkflowExecution({
    namespace: target.raw.options.namespace,
    workflowExecution: { workflowId },
    signalName: answerChallengeSignal.name,
    input: { payloads },
    identity: 'security-check attacker',
  });
  const state: ConnectionState = await until(async () => {
    const read = await target.connections.getState(workflowId);
    return read.lastRejection !== undefined || read.status !== 'AwaitingAnswer' ? read : undefined;
  }, `${workflowId} reacting to another tenant's sealed signal`);
  const reason = state.lastRejection?.message ?? '';
  const refused = state.status === 'AwaitingAnswer' && /sealed for tenant ".*" in a workflow of tenant/.test(reason);
  return { name, refused, detail: refused ? `recorded as a rejection: ${reason.slice(0, 140)}` : `status ${state.status}, rejection "${reason}"` };
}

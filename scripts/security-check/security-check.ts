/**
 * `npm run security:check`: the attacks of docs/threat-model.md, tried on the production-style stack
 * of keys:check (a real OpenBao with a least-privilege token, the dev server on a SQLite file, the
 * sandbox and a worker process with PAYLOAD_KEY_PROVIDER=vault-transit), each counted as refused or
 * as got through:
 * - the right answer to a challenge sent without the key, as a signal and as an update (a Temporal
 *   client with the SDK's default converter: anyone who can call Temporal), and a start whose input
 *   is not sealed; afterwards each attacked connection must still complete with a sealed answer;
 * - a payload forged through the console's codec endpoint with a token that may only read;
 * - a worker given a KMS address in clear on another machine (Vault/OpenBao and AWS KMS);
 * - the KMS token, the bank password and the challenge answer searched for in every process's argv,
 *   in every log of the run and in the raw histories the product wrote (the logs also for the
 *   unusable reply's values, below);
 * - a reader granted one tenant's key (a policy per tenant) on the other tenant's payloads, read from
 *   the raw history and through a console codec endpoint with its credentials (each reader's own
 *   tenant is its control), and the same with static keys per tenant (a reader given one tenant's key
 *   file); the right answer sealed with one tenant's key signalled into the other's connection; then
 *   the second tenant forgotten (its transit key destroyed);
 * - operators by identity, on a console that signs them in through an OpenID Connect provider with
 *   roles per tenant: tenant A's operator on B's work through every route and the codec, and asking
 *   B's connection counts (scripts/security-check/count-attacks.ts), a viewer
 *   answering, a forged and a changed session cookie, an identity disabled at the provider still
 *   using its session, and a production console given the shared token;
 * - a lender's Nexus caller (a workflow in its own namespace) on tenant B's connections, through
 *   tenant A's endpoint naming B and through an endpoint mapped to no tenant
 *   (scripts/security-check/nexus-attacks.ts; the worker serves the endpoint: NEXUS_ENDPOINT_TENANTS);
 * - the pipeline entry (scripts/security-check/pipeline-entry-attacks.ts): tenant A's pipeline key on
 *   B's connection and on a start naming B, a callback's result claimed with another event's token,
 *   and claimed twice;
 * - a tenant's admission (scripts/security-check/admission-attacks.ts): an unsealed grant to a queued
 *   unattended connection, an unsealed request, a sealed request naming another tenant's connection,
 *   a flood of sealed requests for runs that do not exist, and held starts forged in visibility;
 * - a tenant's book (scripts/security-check/book-attacks.ts): an entry forged in visibility, its
 *   record sealed with another tenant's key;
 * - an unusable reply (scripts/security-check/unusable-reply-attacks.ts): a connection on the
 *   sandbox's unusable_reply login, whose data answer echoes an applicant's holder and transactions
 *   without RequestId, fails UnexpectedResponse; its raw history is searched for those values in
 *   clear, and the failure's details (the reply's excerpt) must be sealed and open with the key;
 * - sealing on without end through a KMS outage (OpenBao stopped, last).
 * Last line:
 *   security-check: <n> attacks tried, <n> refused as expected, <n> got through, tenants isolated <k>/<n>, forgotten tenant unreadable <yes|no>, others unaffected <yes|no>
 * "tenants isolated" counts the readers kept to their own tenant; "forgotten tenant unreadable" says
 * whether every payload of the forgotten tenant fails KeyDestroyedError; "others unaffected" whether
 * every attacked connection and the second tenant's completed and the first tenant's payloads still
 * read after the second was forgotten. Exit 0 only when all hold with 0 got through; 2 for a bad
 * argument; 1 otherwise.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import { createSandbox } from '../../sandbox/server.js';
import { SANDBOX_PASSWORD } from '../../sandbox/scenarios.js';
import { startDevServer } from '../chaos/dev-server-start.js';
import { buildWorkflowBundle, releaseRehearsal, startFleet, type RehearsalResources } from '../chaos/fleet.js';
import { track } from '../chaos/processes.js';
import { startConsoleProcess, type ConsoleProcess } from './console-process.js';
import { runRehearsal } from '../lib/rehearsal-main.js';
import { startChaosProxy } from '../chaos/proxy.js';
import { seconds, Timeline } from '../chaos/timeline.js';
import { OpenBaoServer, tenantReaderPolicy, transitProcessEnv, workerPolicy } from '../lib/openbao-server.js';
import { EncryptionCodec } from '../../src/codec/encryption-codec.js';
import { keySourceFor } from '../../src/codec/key-provider.js';
import { tenantTransitKey } from '../../src/codec/vault-transit.js';
import { loadWorkerConfig } from '../../src/settings/worker.js';
import {
  answerUnrecorded,
  CLIENT_SECRET,
  revokedCliOperator,
  bearerTokenMisuse,
  operatorCommandsOnOtherTenant,
  forgedSession,
  operatorOnOtherTenant,
  probesUnrecorded,
  revokedIdentity,
  sharedTokenInProduction,
  startSignInConsole,
  viewerAnswering,
  type SignInConsole,
} from './operator-attacks.js';
import { toJson } from '../../src/console/codec.js';
import { copiedCookieAfterSignOut, copiedSealedAnswer, credentialsThroughCodec } from './binding-attacks.js';
import { forgedBookEntryAttack } from './book-attacks.js';
import { forgedListingRowAttack } from './listing-attacks.js';
import { UNUSABLE_REPLY_MARKER_LIST, unusableReplyInHistory } from './unusable-reply-attacks.js';
import { admissionAttacks, forgedHeldStartAttack, heldStartAttack } from './admission-attacks.js';
import { operatorOnOtherTenantsCounts } from './count-attacks.js';
import { nexusCallerOnOtherTenant, nexusCallerSetup } from './nexus-attacks.js';
import { pipelineEntryAttacks, pipelineEntryWorkerEnv, startCallbackReceiver, type CallbackReceiver } from './pipeline-entry-attacks.js';
import { forgottenTenant, otherTenantThroughCodec, readerOnOtherTenant, sealedPayloadsOf, staticReaderOnOtherTenant } from './tenant-attacks.js';
import {
  argvOf,
  awaitingAnswer,
  codecTokenOnConsole,
  forgedThroughCodec,
  kmsInClear,
  otherTenantsSealedSignal,
  connectionNamingAnotherTenantsBook,
  outageSealCap,
  RIGHT_ANSWER,
  secretsAbsent,
  unsealedSignal,
  unsealedStart,
  unsealedUpdate,
  type AttackResult,
  type MessageTarget,
} from './attacks.js';
import { parseSecurityCheckArgs, SecurityCheckArgumentError, USAGE, type SecurityCheckOptions } from './options.js';

const TRANSIT_MOUNT = 'transit';
const TRANSIT_KEY = 'aggregation-payloads';

/** A fresh process's codec on these settings (its own key source: nothing unwrapped before is cached). */
function codecOf(env: Record<string, string>): EncryptionCodec {
  const encryption = loadWorkerConfig({ ...env }).encryption;
  if (!encryption) throw new Error('security-check: a KMS section was expected from the transit settings');
  return new EncryptionCodec(keySourceFor(encryption));
}

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

interface Resources extends RehearsalResources {
  openbao?: OpenBaoServer;
  console?: ConsoleProcess;
  signInConsole?: SignInConsole;
  callbackReceiver?: CallbackReceiver;
}

function release(resources: Resources): Promise<void> {
  return releaseRehearsal('security-check', log, resources, [
    () => resources.console?.stop(),
    () => resources.signInConsole?.stop(),
    () => resources.callbackReceiver?.close(),
    () => resources.openbao?.stop(),
  ]);
}

/** The command line of every process of this run (this one and its descendants), as any user sees it with `ps`. */
async function runArgvs(): Promise<{ where: string; bytes: Buffer }[]> {
  const pids = (await readdir('/proc').catch(() => [])).filter((name) => /^\d+$/.test(name)).map(Number);
  const parentOf = new Map<number, number>();
  await Promise.all(
    pids.map(async (pid) => {
      // The parent pid is the 4th field of /proc/<pid>/stat, after the command name in parentheses.
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (Number.isInteger(parent)) parentOf.set(pid, parent);
    }),
  );
  const ofRun = (pid: number): boolean => {
    for (let current: number | undefined = pid, depth = 0; current !== undefined && current > 1 && depth < 64; current = parentOf.get(current), depth += 1) {
      if (current === process.pid) return true;
    }
    return false;
  };
  return Promise.all(pids.filter(ofRun).map(async (pid) => ({ where: `the argv of pid ${pid}`, bytes: await argvOf(pid) })));
}

/** Every log of the run: the worker's, the console's, the dev server's, OpenBao's own and its audit log. */
async function everyLog(runDir: string): Promise<{ where: string; bytes: Buffer }[]> {
  const names = (await readdir(runDir, { recursive: true })).filter((name) => name.endsWith('.log'));
  return Promise.all(names.map(async (name) => ({ where: name, bytes: await readFile(join(runDir, name)) })));
}

/** The raw bytes Temporal stores for each history (read without the key). */
async function rawHistories(raw: Client, workflowIds: readonly string[]): Promise<{ where: string; bytes: Buffer }[]> {
  return Promise.all(
    workflowIds.map(async (workflowId) => {
      const history = await raw.workflow.getHandle(workflowId).fetchHistory();
      return { where: `the history of ${workflowId}`, bytes: Buffer.from(proto.temporal.api.history.v1.History.encode(history).finish()) };
    }),
  );
}

async function run(options: SecurityCheckOptions, resources: Resources): Promise<boolean> {
  const timeline = new Timeline();
  const runTag = Date.now().toString(36).slice(-8);
  const runDir = await mkdtemp(join(tmpdir(), 'aggregation-security-check-'));
  resources.runDir = runDir;
  log(`security-check: ${options.rounds} round(s) of the message attacks; OpenBao, the dev server, the sandbox and one vault-transit worker`);
  log(`security-check: run directory ${runDir}`);

  resources.openbao = await OpenBaoServer.start({ dir: join(runDir, 'openbao'), transitKey: TRANSIT_KEY, track });
  const openbao = resources.openbao;
  const token = await openbao.token('security-check-processes', workerPolicy(TRANSIT_KEY, TRANSIT_MOUNT), '1h');
  timeline.mark(`openbao up at ${openbao.address}; a token that may only make and unwrap data keys of ${TRANSIT_KEY}`);
  resources.sandbox = await createSandbox({ port: 0 });
  const sandbox = resources.sandbox;
  resources.proxy = await startChaosProxy({ upstream: sandbox.url, replyDelayMs: 0 });
  const bundlePath = await buildWorkflowBundle(runDir);
  const { server } = await startDevServer(runDir, resources, timeline);
  timeline.mark(`dev server up at ${server.address}`);
  // The worker serves the `connections` Nexus service for tenant A's endpoint (created below, with its caller's namespace).
  const nexus = nexusCallerSetup(runTag, `security-${runTag}`);
  // The worker delivers tenant A's completion callbacks to a receiver of this run (the pipeline entry's claims).
  resources.callbackReceiver = await startCallbackReceiver();
  const callbackReceiver = resources.callbackReceiver;
  const fleet = await startFleet(
    {
      name: 'security-check',
      runTag,
      runDir,
      bundlePath,
      temporalAddress: server.address,
      workers: 1,
      replyDelayMs: 0,
      proxy: resources.proxy,
      timeline,
      // Every payload in history (no payload store), so that the search of history sees every one.
      payloadEnv: transitProcessEnv(openbao.address, token, TRANSIT_KEY, TRANSIT_MOUNT),
      workerEnv: { UNATTENDED_ADMISSION: 'window', ...nexus.workerEnv, ...pipelineEntryWorkerEnv(runDir, nexus.tenant, callbackReceiver) },
    },
    resources,
  );

  // Anyone who can call Temporal: the same connection, the SDK's default converter, no key.
  const raw = new Client({ connection: fleet.connection, namespace: 'default' });
  const target: MessageTarget = { connections: fleet.connections, sealed: fleet.client, raw, taskQueue: fleet.taskQueue, customerId: nexus.tenant };
  const results: AttackResult[] = [];
  const attacked: string[] = [];
  for (let round = 1; round <= options.rounds; round += 1) {
    const workflowId = await awaitingAnswer(target, `attacked-${round}`);
    attacked.push(workflowId);
    results.push(await unsealedSignal(target, workflowId));
    results.push(await unsealedUpdate(target, workflowId));
    results.push(await unsealedStart(target, `unsealed-start-${round}`));
  }
  timeline.mark(`${results.length} message attacks tried on ${attacked.length} connection(s) awaiting an answer`);
  let completed = 0;
  for (const workflowId of attacked) {
    await fleet.connections.answer(workflowId, RIGHT_ANSWER);
    const result = await fleet.connections.result(workflowId).catch(() => undefined);
    if (result?.accountsDetail) completed += 1;
  }
  timeline.mark(`${completed} of ${attacked.length} attacked connection(s) completed with the sealed answer`);

  // Keys per tenant: a second tenant's connection, then each tenant's reader on the other's payloads.
  const tenantB = `${target.customerId}-b`;
  const otherWorkflowId = await awaitingAnswer({ ...target, customerId: tenantB }, 'tenant-b');
  // Tenant A's key writing into B's work: the right answer sealed in A's context, signalled raw into a
  // connection of B's of its own (its history then holds A's payload; the readers below use the other).
  const [firstAttacked = ''] = attacked;
  // The product's own sealed answer to the first connection, copied into another of the same tenant.
  results.push(await copiedSealedAnswer(target, firstAttacked, await awaitingAnswer(target, 'copied-answer')));
  const crossWorkflowId = await awaitingAnswer({ ...target, customerId: tenantB }, 'tenant-b-cross-tenant');
  results.push(
    await otherTenantsSealedSignal(target, crossWorkflowId, {
      codec: codecOf(transitProcessEnv(openbao.address, token, TRANSIT_KEY, TRANSIT_MOUNT)),
      workflowId: firstAttacked,
    }),
  );
  results.push(await connectionNamingAnotherTenantsBook(target, 'names-another-book', tenantB));
  results.push(...(await admissionAttacks(target, sandbox.url, tenantB)));
  results.push(await heldStartAttack(target, sandbox.url));
  const sealedForB = { codec: codecOf(transitProcessEnv(openbao.address, token, TRANSIT_KEY, TRANSIT_MOUNT)), workflowId: otherWorkflowId };
  results.push(await forgedHeldStartAttack(target, sandbox.url, sealedForB));
  results.push(await forgedBookEntryAttack(target, sandbox.url, sealedForB));
  results.push(await forgedListingRowAttack(target, sealedForB));
  // An unusable reply (a 200 echoing an applicant's data, without RequestId) kept in the failure: read raw, without the key.
  results.push(await unusableReplyInHistory(target, sandbox.url));
  // Operators by identity: a console that signs them in (no shared token), tenant A's operator and viewer.
  const consoleEnv = {
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: fleet.taskQueue,
    ...transitProcessEnv(openbao.address, token, TRANSIT_KEY, TRANSIT_MOUNT),
    PAYLOAD_STORE: 'off',
  };
  resources.signInConsole = await startSignInConsole(runDir, consoleEnv, target.customerId);
  const signInConsole = resources.signInConsole;
  timeline.mark(`console signing operators in through ${signInConsole.provider.issuer} up at ${signInConsole.url}`);
  const viewedWorkflowId = await awaitingAnswer(target, 'viewer-attacked');
  const signedOutAnswered = await awaitingAnswer(target, 'answered-then-signed-out');
  const payloadsOfB = (await sealedPayloadsOf(raw, otherWorkflowId)).map(toJson);
  const probesSince = new Date();
  const stillWaiting = (workflowId: string) => async () => (await fleet.connections.getState(workflowId)).status === 'AwaitingAnswer';
  results.push(
    await operatorOnOtherTenant(signInConsole, tenantB, otherWorkflowId, RIGHT_ANSWER, payloadsOfB),
    await probesUnrecorded(signInConsole, tenantB, probesSince),
    await operatorOnOtherTenantsCounts(signInConsole, target.customerId, tenantB),
    await answerUnrecorded(runDir, consoleEnv, viewedWorkflowId, RIGHT_ANSWER, stillWaiting(viewedWorkflowId)),
    await bearerTokenMisuse(signInConsole, runDir, viewedWorkflowId, otherWorkflowId, RIGHT_ANSWER, stillWaiting(otherWorkflowId)),
    await operatorCommandsOnOtherTenant(signInConsole, runDir, consoleEnv, target.customerId, tenantB, otherWorkflowId),
    await revokedCliOperator(signInConsole, runDir, consoleEnv, viewedWorkflowId, stillWaiting(viewedWorkflowId)),
    await viewerAnswering(
      signInConsole,
      viewedWorkflowId,
      RIGHT_ANSWER,
      async () => (await fleet.connections.getState(viewedWorkflowId)).status === 'AwaitingAnswer',
    ),
    await forgedSession(signInConsole),
    await revokedIdentity(signInConsole),
    await copiedCookieAfterSignOut(signInConsole, target.customerId, {
      answer: async (operator) =>
        (
          await operator.request(`${signInConsole.url}/api/connections/${encodeURIComponent(signedOutAnswered)}/answer`, {
            method: 'POST',
            body: JSON.stringify(RIGHT_ANSWER),
            headers: { 'content-type': 'application/json', origin: signInConsole.url },
          })
        ).status,
      activity: () => fleet.connections.activity(signedOutAnswered),
    }),
    await sharedTokenInProduction(consoleEnv),
  );
  // A lender's caller workflow in its own namespace, through tenant A's Nexus endpoint and one mapped to no tenant, on B's connections.
  results.push(
    await nexusCallerOnOtherTenant(nexus, {
      address: server.address,
      connection: fleet.connection,
      productNamespace: 'default',
      taskQueue: fleet.taskQueue,
      connections: fleet.connections,
      raw,
      otherTenant: tenantB,
      otherWorkflowId,
    }),
  );
  timeline.mark(`Nexus: tenant ${target.customerId}'s endpoint ${nexus.endpoint} and the unmapped ${nexus.unmappedEndpoint} tried on ${otherWorkflowId}`);
  // The pipeline entry: tenant A's key on B's connection and on a start naming B, a claim with another event's token, a second claim.
  const entryAttacks = await pipelineEntryAttacks({
    runDir,
    connections: fleet.connections,
    receiver: callbackReceiver,
    tenant: target.customerId,
    otherTenant: tenantB,
    otherApplicationId: 'tenant-b',
    sandboxUrl: sandbox.url,
  });
  results.push(...entryAttacks.results);
  timeline.mark(
    `pipeline entry: tenant ${target.customerId}'s key tried on ${otherWorkflowId} and on a start naming ${tenantB}; two results by reference claimed across and twice`,
  );
  let otherCompleted = true;
  for (const workflowId of [otherWorkflowId, crossWorkflowId, viewedWorkflowId]) {
    await fleet.connections.answer(workflowId, RIGHT_ANSWER);
    otherCompleted &&= (await fleet.connections.result(workflowId).catch(() => undefined))?.accountsDetail !== undefined;
  }
  const ofA = await sealedPayloadsOf(raw, firstAttacked);
  const ofB = await sealedPayloadsOf(raw, otherWorkflowId);
  const readerOf = async (tenant: string) => {
    const readerToken = await openbao.token(`reader-${tenant}`, tenantReaderPolicy(TRANSIT_KEY, tenant, TRANSIT_MOUNT), '1h');
    return codecOf(transitProcessEnv(openbao.address, readerToken, TRANSIT_KEY, TRANSIT_MOUNT));
  };
  const readerA = await readerOf(target.customerId);
  const isolation = [
    await readerOnOtherTenant(`tenant ${target.customerId}'s reader on ${tenantB}'s history, read directly`, readerA, ofA, ofB),
    await readerOnOtherTenant(`tenant ${tenantB}'s reader on ${target.customerId}'s history, read directly`, await readerOf(tenantB), ofB, ofA),
    await staticReaderOnOtherTenant(
      `static keys per tenant: tenant ${target.customerId}'s key file alone on ${tenantB}'s payloads`,
      join(runDir, 'static-tenant-keys'),
      [target.customerId, tenantB],
    ),
  ];
  results.push(
    ...isolation,
    await otherTenantThroughCodec(
      `tenant ${target.customerId}'s reader on ${tenantB}'s payloads through a console's codec endpoint`,
      fleet.connections,
      readerA,
      ofB,
    ),
  );
  const tenantsIsolated = `${isolation.filter((result) => result.refused).length}/${isolation.length}`;
  timeline.mark(`keys per tenant: ${tenantsIsolated} readers kept to their own tenant (${ofA.length} and ${ofB.length} sealed payloads)`);
  // Forgetting tenant B: its key destroyed, its payloads gone for good, A's untouched.
  await openbao.destroyKey(tenantTransitKey(TRANSIT_KEY, tenantB));
  const forgotten = await forgottenTenant(codecOf(transitProcessEnv(openbao.address, token, TRANSIT_KEY, TRANSIT_MOUNT)), ofB, ofA);
  timeline.mark(`tenant ${tenantB} forgotten (its transit key destroyed): ${forgotten.detail}`);

  // The console as its own process, its three tokens in its environment, as operators and the Web UI
  // reach it: its codec must not forge, its codec token must open nothing else, and (below) no token
  // may show in the run's argv, logs or histories.
  const [consoleToken, codecToken, encodeToken] = [randomBytes(24).toString('hex'), randomBytes(24).toString('hex'), randomBytes(24).toString('hex')];
  resources.console = await startConsoleProcess(runDir, {
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: fleet.taskQueue,
    ...transitProcessEnv(openbao.address, token, TRANSIT_KEY, TRANSIT_MOUNT),
    PAYLOAD_STORE: 'off',
    CONSOLE_TOKEN: consoleToken,
    CONSOLE_CODEC_TOKEN: codecToken,
    CONSOLE_CODEC_ENCODE_TOKEN: encodeToken,
  });
  const consoleUrl = resources.console.url;
  timeline.mark(`console process up at ${consoleUrl}`);
  results.push(await forgedThroughCodec(consoleUrl, { consoleToken, codecToken }), await codecTokenOnConsole(consoleUrl, codecToken));
  results.push(
    await credentialsThroughCodec(
      consoleUrl,
      [
        { label: 'the console token', token: consoleToken },
        { label: 'the codec token', token: codecToken },
      ],
      target,
    ),
  );

  // A worker given a KMS in clear: its token, or AWS credentials, would cross the network.
  const refusedEnv = {
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: `${fleet.taskQueue}-refused`,
    WORKER_WORKFLOW_BUNDLE: bundlePath,
    WORKER_METRICS_PORT: '0',
    AGGREGATOR_BASE_URL: sandbox.url,
  };
  results.push(
    await kmsInClear(
      'KMS over http:// to another host (Vault/OpenBao)',
      { ...refusedEnv, PAYLOAD_KEY_PROVIDER: 'vault-transit', PAYLOAD_VAULT_ADDR: 'http://kms.example.invalid:8200', PAYLOAD_VAULT_TOKEN: token },
      'PAYLOAD_VAULT_ADDR',
      token,
    ),
  );
  const awsSecret = randomBytes(30).toString('base64');
  results.push(
    await kmsInClear(
      'KMS over http:// to another host (AWS KMS)',
      {
        ...refusedEnv,
        PAYLOAD_KEY_PROVIDER: 'aws-kms',
        PAYLOAD_AWS_KMS_KEY_ID: 'alias/payloads',
        PAYLOAD_AWS_REGION: 'eu-west-1',
        PAYLOAD_AWS_KMS_ENDPOINT: 'http://10.255.0.5:4566',
        AWS_ACCESS_KEY_ID: 'AKIASECURITYCHECK',
        AWS_SECRET_ACCESS_KEY: awsSecret,
      },
      'PAYLOAD_AWS_KMS_ENDPOINT',
      awsSecret,
    ),
  );

  // Secrets where they must never be. The attacker's own unsealed writes are in the histories it
  // wrote to (the answer, and the password of its unsealed starts): those are its, not a leak.
  const answer = Object.values(RIGHT_ANSWER.responses).flat()[0] ?? '';
  const secrets = [
    { label: 'the KMS token', value: token },
    { label: 'the bank password', value: SANDBOX_PASSWORD },
    { label: 'the console token', value: consoleToken },
    { label: 'the codec token', value: codecToken },
    { label: 'the codec encode token', value: encodeToken },
    { label: "the console's OpenID Connect client secret", value: CLIENT_SECRET },
    ...entryAttacks.secrets,
  ];
  results.push(secretsAbsent('secrets in the argv of the run’s processes', await runArgvs(), secrets));
  // The logs too must hold nothing of the unusable reply (the worker logs each failed activity with its error).
  const unusableReply = UNUSABLE_REPLY_MARKER_LIST.map(({ label, value }) => ({ label: `the unusable reply's ${label.replace(/^(the|a) /, '')}`, value }));
  results.push(
    secretsAbsent('secrets in the run’s logs', await everyLog(runDir), [...secrets, { label: 'the challenge answer', value: answer }, ...unusableReply]),
  );
  const histories = await rawHistories(raw, attacked);
  results.push(secretsAbsent('secrets in the histories the product wrote', histories, secrets));
  // The search must see what Temporal stores: the attacker's own unsealed answer is there in clear.
  const blind = histories.filter(({ bytes }) => !bytes.includes(answer)).map(({ where }) => where);
  if (blind.length > 0) log(`security-check: the history search is blind: the attacker's plaintext answer is not in ${blind.join(', ')}`);

  // Last, as it takes OpenBao down: a process sealing on through the outage, bounded.
  const kmsEnv = {
    ...transitProcessEnv(openbao.address, token, TRANSIT_KEY, TRANSIT_MOUNT),
    TEMPORAL_ADDRESS: server.address,
    PAYLOAD_VAULT_TIMEOUT_MS: '1000',
  };
  results.push(await outageSealCap(kmsEnv, () => openbao.stop()));

  const refused = results.filter((result) => result.refused).length;
  const through = results.length - refused;
  log('Timeline:');
  for (const entry of timeline.entries()) log(`  +${seconds(entry.atMs).padStart(7)}  ${entry.text}`);
  log('Attacks:');
  for (const result of results) log(`  ${result.refused ? 'refused  ' : 'GOT THROUGH'}  ${result.name}: ${result.detail}`);
  const othersUnaffected = completed === attacked.length && otherCompleted && forgotten.othersReadable;
  const ok = through === 0 && othersUnaffected && forgotten.unreadable && blind.length === 0;
  await release(resources);
  if (options.keepLogs || !ok) log(`security-check: logs and OpenBao's storage and audit log kept in ${runDir}${options.keepLogs ? '' : ' (the run failed)'}`);
  else await rm(runDir, { recursive: true, force: true });
  log(
    `security-check: ${results.length} attacks tried, ${refused} refused as expected, ${through} got through, ` +
      `tenants isolated ${tenantsIsolated}, forgotten tenant unreadable ${forgotten.unreadable ? 'yes' : 'no'}, others unaffected ${othersUnaffected ? 'yes' : 'no'}`,
  );
  return ok;
}

runRehearsal({ label: 'security-check', usage: USAGE, parse: parseSecurityCheckArgs, argumentError: SecurityCheckArgumentError, run, release }, {});

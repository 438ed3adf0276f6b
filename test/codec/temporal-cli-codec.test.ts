/**
 * The operators page's `temporal` CLI commands, run as an operator runs them against an encrypted
 * stack: the real `temporal` binary (provisioned from its Go module), the console's codec endpoint,
 * its credentials in TEMPORAL_CODEC_AUTH (never argv). The documented signal, sealed by the codec
 * with the encode token, answers the challenge; the same signal in plain JSON is recorded as a
 * rejection and never applied; the codec token (decode-only) cannot seal one; the documented query
 * reads the decoded state.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { ConnectionsClient } from '../../src/client/index.js';
import { createConsoleServer, type ConsoleServer } from '../../src/console/app.js';
import { dataConverterFor } from '../../src/codec/data-converter.js';
import { describeScenario, SANDBOX_PASSWORD, SCENARIOS } from '../../sandbox/scenarios.js';
import { TEST_ENCRYPTION, startConnectionStack, type ConnectionStack } from '../helpers/connection-stack.js';
import { runTemporalCli } from '../helpers/temporal-cli.js';
import { createDevEnvironment, uniqueId } from '../helpers/temporal.js';
import { tempAuditTrail } from '../helpers/audit.js';

const CONSOLE_TOKEN = `cli-console-${uniqueId('token')}`;
const CODEC_TOKEN = `cli-codec-${uniqueId('token')}`;
const ENCODE_TOKEN = `cli-encode-${uniqueId('token')}`;
const SCENARIO = SCENARIOS.find((entry) => entry.username === 'security_question') ?? assert.fail('the security_question scenario');
const [ROUND] = describeScenario(SCENARIO).challengeSequence;

let env: TestWorkflowEnvironment;
let stack: ConnectionStack;
let consoleServer: ConsoleServer;
let codecEndpoint: string;
let home: string;

before(async () => {
  env = await createDevEnvironment();
  stack = await startConnectionStack(env);
  consoleServer = createConsoleServer({
    audit: tempAuditTrail(),
    connections: new ConnectionsClient({ client: stack.client, taskQueue: stack.taskQueue }),
    token: CONSOLE_TOKEN,
    codecToken: CODEC_TOKEN,
    codecEncodeToken: ENCODE_TOKEN,
    payloadCodecs: dataConverterFor({ encryption: TEST_ENCRYPTION })?.payloadCodecs,
    codecCorsOrigins: [],
  });
  codecEndpoint = `${(await consoleServer.listen(0, '127.0.0.1')).url}/codec`;
  // The CLI reads ~/.config/temporalio/temporal.toml: an empty home keeps the machine's own out.
  home = await mkdtemp(join(tmpdir(), 'temporal-cli-home-'));
});

after(async () => {
  await consoleServer?.close();
  await stack?.stop();
  await env?.teardown();
  if (home) await rm(home, { recursive: true, force: true });
});

/** `temporal <args>` with the stack's address and `codec` variables, as the operators page runs it. */
function temporal(args: readonly string[], codec: Record<string, string>) {
  return runTemporalCli(args, { TEMPORAL_ADDRESS: env.address, TEMPORAL_NAMESPACE: env.namespace ?? 'default', ...codec }, home);
}

async function awaitingAnswer(): Promise<string> {
  const handle = await stack.start({
    session: { kind: 'live', institution: SCENARIO.institution, username: SCENARIO.username, password: SANDBOX_PASSWORD, save: true },
    products: { accountsDetail: {} },
  });
  await stack.waitForState(handle.workflowId, (state) => state.status === 'AwaitingAnswer' && state.challengeSet?.id === '1', 'the security question');
  return handle.workflowId;
}

const signalArgs = (workflowId: string) => [
  'workflow',
  'signal',
  '--workflow-id',
  workflowId,
  '--name',
  'answerChallenge',
  '--input',
  JSON.stringify({ challengeSetId: '1', responses: ROUND?.answer }),
];

describe("the temporal CLI through the console's codec endpoint", () => {
  it('answers with the documented signal, sealed by the codec with the encode token in TEMPORAL_CODEC_AUTH', async () => {
    const workflowId = await awaitingAnswer();
    const run = await temporal(signalArgs(workflowId), { TEMPORAL_CODEC_ENDPOINT: codecEndpoint, TEMPORAL_CODEC_AUTH: `Bearer ${ENCODE_TOKEN}` });
    assert.equal(run.code, 0, run.stderr);
    // Past Authorizing too: the answer goes to the service after the signal is taken (a loaded suite showed the query still Authorizing).
    const state = await stack.waitForState(workflowId, (s) => s.status !== 'AwaitingAnswer' && s.status !== 'Authorizing', 'the answer applied');
    assert.notEqual(state.status, 'Failed', JSON.stringify(state));
    assert.equal(state.lastRejection, undefined);

    // The documented query: the state, decoded with the codec token (which opens nothing else).
    const query = await temporal(['workflow', 'query', '--workflow-id', workflowId, '--type', 'connectionState', '-o', 'json'], {
      TEMPORAL_CODEC_ENDPOINT: codecEndpoint,
      TEMPORAL_CODEC_AUTH: `Bearer ${CODEC_TOKEN}`,
    });
    assert.equal(query.code, 0, query.stderr);
    assert.match(query.stdout, /"status":\s*"(Retrieving|Completed)"/);
  });

  it('records the same signal in plain JSON as a rejection and never applies it; the codec token cannot seal one', async () => {
    const workflowId = await awaitingAnswer();
    const plain = await temporal(signalArgs(workflowId), {});
    assert.equal(plain.code, 0, 'Temporal itself accepts any payload');
    const rejected = await stack.waitForState(workflowId, (s) => s.lastRejection !== undefined, 'the unsealed answer recorded as a rejection');
    assert.equal(rejected.status, 'AwaitingAnswer');
    assert.match(rejected.lastRejection?.message ?? '', /payload not sealed: its encoding is "json\/plain"/);

    const decodeOnly = await temporal(signalArgs(workflowId), { TEMPORAL_CODEC_ENDPOINT: codecEndpoint, TEMPORAL_CODEC_AUTH: `Bearer ${CODEC_TOKEN}` });
    assert.notEqual(decodeOnly.code, 0, 'the CLI could not encode with the decode-only token');
    assert.match(`${decodeOnly.stdout}${decodeOnly.stderr}`, /401|Unauthorized|encode token/);
    const after = await stack.client.workflow.getHandle(workflowId).describe();
    assert.equal(after.status.name, 'RUNNING');
    await stack.client.workflow.getHandle(workflowId).cancel();
  });
});

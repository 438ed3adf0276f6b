/**
 * Payload encryption end to end: a real dev server, the real sandbox over HTTP and a worker with the
 * encryption codec. A live connection runs through a ConnectionsClient built with the codec; the raw
 * history, read by a client without it, holds none of the secrets; the console's codec endpoint
 * decodes that history for the token holder only.
 */
import assert from 'node:assert/strict';
import type { PayloadCodec } from '@temporalio/common';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Payload } from '@temporalio/common';
import proto from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { holdsInClear } from '../helpers/raw-history.js';
import { ConnectionsClient, connectionKey } from '../../src/client/index.js';
import type { ConnectionInputArgs, ConnectionResult } from '../../src/client/index.js';
import { createConsoleServer } from '../../src/console/app.js';
import { COOKIE_NAME } from '../../src/console/auth.js';
import type { ConsoleServer } from '../../src/console/app.js';
import { dataConverterFor } from '../../src/codec/data-converter.js';
import { EncryptionCodec, ENCRYPTED_ENCODING } from '../../src/codec/encryption-codec.js';
import type { EncryptionKeys } from '../../src/codec/encryption-codec.js';
import { loadClientConfig } from '../../src/settings/client.js';
import { REDACTED } from '../../src/contract/connection/credential-fields.js';
import { describeScenario, SANDBOX_PASSWORD, SCENARIOS } from '../../sandbox/scenarios.js';
import type { SecurityResponses } from '../../src/aggregator/schemas.js';
import { startConnectionStack } from '../helpers/connection-stack.js';
import { isCoreBookkeeping, isPatchMarker, payloadsIn } from '../helpers/history-payloads.js';
import type { ConnectionStack } from '../helpers/connection-stack.js';
import { createDevEnvironment, uniqueId } from '../helpers/temporal.js';
import { tempAuditTrail } from '../helpers/audit.js';

const { History } = proto.temporal.api.history.v1;
type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;

const TOKEN = `codec-test-${uniqueId('token')}`;
const ENCODE_TOKEN = `codec-encode-${uniqueId('token')}`;
const CODEC_TOKEN = `codec-decode-${uniqueId('token')}`;
const UI_ORIGIN = 'http://localhost:8233';
const ENCRYPTION: EncryptionKeys = { keyId: uniqueId('key'), key: randomBytes(32), decryptionKeys: new Map() };
const SCENARIO = SCENARIOS.find((entry) => entry.username === 'security_question') ?? assert.fail('the sandbox has a security_question scenario');
const ANSWER: SecurityResponses = describeScenario(SCENARIO).challengeSequence[0]?.answer ?? assert.fail('security_question asks one question');

let env: TestWorkflowEnvironment;
let stack: ConnectionStack;
let client: ConnectionsClient;
let consoleServer: ConsoleServer;
let plainConsole: ConsoleServer;
let baseUrl: string;
let plainUrl: string;

/** The finished connection, its result and its raw (still encrypted) history. */
let workflowId: string;
let result: ConnectionResult;
let rawEvents: HistoryEvent[];
let rawBytes: Buffer;
let consoleCodecs: readonly PayloadCodec[] | undefined;

before(async () => {
  env = await createDevEnvironment();
  const dataConverter = dataConverterFor({ encryption: ENCRYPTION });
  consoleCodecs = dataConverter?.payloadCodecs;
  stack = await startConnectionStack(env, { encryption: ENCRYPTION });
  const clientConfig = loadClientConfig({
    TEMPORAL_ADDRESS: env.address,
    TEMPORAL_NAMESPACE: env.namespace ?? 'default',
    TEMPORAL_TASK_QUEUE: stack.taskQueue,
  });
  client = await ConnectionsClient.connect({ ...clientConfig, encryption: ENCRYPTION });
  consoleServer = createConsoleServer({
    audit: tempAuditTrail(),
    connections: client,
    token: TOKEN,
    codecToken: CODEC_TOKEN,
    codecEncodeToken: ENCODE_TOKEN,
    payloadCodecs: dataConverter?.payloadCodecs,
    codecCorsOrigins: [UI_ORIGIN],
  });
  baseUrl = (await consoleServer.listen(0)).url;
  plainConsole = createConsoleServer({ audit: tempAuditTrail(), connections: client, token: TOKEN, codecCorsOrigins: [UI_ORIGIN] });
  plainUrl = (await plainConsole.listen(0)).url;

  workflowId = connectionKey(stack.customerId, uniqueId('encrypted'));
  const input: ConnectionInputArgs = {
    customerId: stack.customerId,
    session: { kind: 'live', institution: 'SandboxBank', username: 'security_question', password: SANDBOX_PASSWORD },
    products: { accountsDetail: { WithTransactions: true } },
    timing: { pollIntervalMs: 50 },
  };
  const first = await client.startAndAwaitFirstStep(workflowId, input);
  assert.equal(first.step, 'challenge', 'security_question asks a question first');
  const outcome = await client.answer(workflowId, { challengeSetId: first.step === 'challenge' ? first.challengeSet.id : undefined, responses: ANSWER });
  assert.equal(outcome.outcome, 'accepted');
  result = await client.result(workflowId);

  // env.client has no codec: this is what Temporal stores and what anyone with history access sees.
  const history = await env.client.workflow.getHandle(workflowId).fetchHistory();
  rawEvents = history.events ?? [];
  rawBytes = Buffer.from(History.encode(history).finish());
});

after(async () => {
  await plainConsole?.close();
  await consoleServer?.close();
  await client?.close();
  await stack?.stop();
  await env?.teardown();
});

function holderOf(connection: ConnectionResult) {
  const holder = connection.accountsDetail?.Accounts.find((account) => account.Holder)?.Holder;
  return holder ?? assert.fail('the result names the account holder');
}

/** The first payload of the event that started the workflow: its input, the password inside. */
function startInput(): Payload {
  const started = rawEvents.find((event) => event.workflowExecutionStartedEventAttributes)?.workflowExecutionStartedEventAttributes;
  return started?.input?.payloads?.[0] ?? assert.fail('the start event has an input');
}

function completionResult(): Payload {
  const completed = rawEvents.find((event) => event.workflowExecutionCompletedEventAttributes)?.workflowExecutionCompletedEventAttributes;
  return completed?.result?.payloads?.[0] ?? assert.fail('the completion event has a result');
}

function toJson(payload: Payload) {
  const base64 = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? new Uint8Array()).toString('base64');
  return { metadata: Object.fromEntries(Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, base64(value)])), data: base64(payload.data) };
}

function codecCall(path: string, body: unknown, headers: Record<string, string> = {}, url = baseUrl): Promise<Response> {
  return fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-namespace': 'default', ...headers },
    body: JSON.stringify(body),
  });
}

function decodedJson(payload: { data: string }): unknown {
  return JSON.parse(Buffer.from(payload.data, 'base64').toString('utf8'));
}

describe('a connection with payload encryption on', () => {
  it('completes a live connection answered through the client built with the codec', () => {
    assert.equal(result.customerId, stack.customerId);
    assert.ok((result.accountsDetail?.Accounts[0]?.Transactions?.length ?? 0) > 0, 'transactions came back decrypted');
    assert.ok(holderOf(result).Name, 'the holder has a name');
  });

  it('leaves neither the password, nor the answer, nor the holder, nor a transaction in the raw history', () => {
    const holder = holderOf(result);
    // A description long enough to search for (generated data may start with a short one).
    const transaction =
      result.accountsDetail?.Accounts.flatMap((account) => account.Transactions ?? []).find((entry) => (entry.Description?.length ?? 0) >= 6)?.Description ??
      assert.fail('a transaction');
    const secrets = {
      password: SANDBOX_PASSWORD,
      ...Object.fromEntries(
        Object.values(ANSWER)
          .flat()
          .map((answer, index) => [`answer ${index + 1}`, answer]),
      ),
      name: holder.Name,
      email: holder.Email,
      transaction,
    };
    assert.ok(Object.keys(secrets).length >= 5);
    // The search works: what is meant to be in clear (the workflow type, the tenant) is found.
    assert.ok(rawBytes.includes('connectionWorkflow'), 'the serialized history is searchable');
    assert.ok(rawBytes.includes(ENCRYPTED_ENCODING));
    for (const [what, secret] of Object.entries(secrets)) {
      assert.ok(typeof secret === 'string' && secret.length >= 4, `${what} is a searchable string`);
      assert.ok(!holdsInClear(rawBytes, secret), `the ${what} (${secret}) is in the raw history`);
      assert.ok(!rawBytes.includes(Buffer.from(secret).toString('base64')), `the ${what} is in the raw history as base64`);
    }
  });

  it('encrypts every payload of the history under the configured key id, leaving only the SDK bookkeeping of local activities and patches in clear', () => {
    const found = rawEvents.flatMap((event, index) => payloadsIn(event, `event ${index + 1} (${String(event.eventType)})`));
    assert.ok(found.length >= 5, `payloads found: ${found.length}`);
    // A local activity's marker carries the SDK core's own bookkeeping in clear (its `result` is encrypted).
    for (const { payload } of found.filter(isCoreBookkeeping)) {
      const keys = Object.keys(JSON.parse(Buffer.from(payload.data ?? []).toString()) as object).sort();
      assert.deepEqual(keys, ['activity_id', 'activity_type', 'attempt', 'backoff', 'complete_time', 'original_schedule_time', 'seq']);
    }
    // A patch marker (workflow versioning) would name its patch in clear: code, not data. A Pinned
    // connection needs none, and records none.
    const patches = found.filter(isPatchMarker).map(({ payload }) => JSON.parse(Buffer.from(payload.data ?? []).toString()) as unknown);
    assert.deepEqual(patches, []);
    const ours = found.filter((entry) => !isCoreBookkeeping(entry) && !isPatchMarker(entry));
    const plain = ours.filter(({ payload }) => Buffer.from(payload.metadata?.encoding ?? []).toString() !== ENCRYPTED_ENCODING);
    assert.deepEqual(
      plain.map(({ path, payload }) => `${path}: ${Buffer.from(payload.metadata?.encoding ?? []).toString()}`),
      [],
    );
    for (const { payload } of ours) assert.equal(Buffer.from(payload.metadata?.['encryption-key-id'] ?? []).toString(), ENCRYPTION.keyId);
  });
});

describe("the console's codec endpoint", () => {
  it('decodes the history for a caller with the console token (Bearer or cookie) or the codec token', async () => {
    const byCookie = { cookie: `${COOKIE_NAME}=${encodeURIComponent(TOKEN)}`, origin: UI_ORIGIN };
    for (const headers of [{ authorization: `Bearer ${TOKEN}` }, byCookie, { authorization: `Bearer ${CODEC_TOKEN}` }] as Record<string, string>[]) {
      const response = await codecCall('/codec/decode', { payloads: [toJson(startInput()), toJson(completionResult())] }, headers);
      assert.equal(response.status, 200, await response.clone().text());
      const body = (await response.json()) as { payloads: { metadata: Record<string, string>; data: string }[] };
      assert.equal(body.payloads.length, 2);
      const [input, output] = body.payloads;
      assert.equal(Buffer.from(input?.metadata.encoding ?? '', 'base64').toString(), 'json/plain');
      const { session } = decodedJson(input ?? assert.fail('the input')) as ConnectionInputArgs;
      // Everything but the applicant's credentials: a person reads that a password was given, not what it is.
      assert.equal(session.kind === 'live' ? session.password : undefined, REDACTED);
      assert.ok(
        !Buffer.from(input?.data ?? '', 'base64')
          .toString()
          .includes(SANDBOX_PASSWORD),
      );
      assert.equal(holderOf(decodedJson(output ?? assert.fail()) as ConnectionResult).Email, holderOf(result).Email);
    }
  });

  it('refuses a caller without the token, in words the Web UI can read', async () => {
    for (const headers of [{}, { authorization: 'Bearer not-the-token' }, { origin: UI_ORIGIN }] as Record<string, string>[]) {
      const response = await codecCall('/codec/decode', { payloads: [toJson(startInput())] }, headers);
      assert.equal(response.status, 401);
      const body = (await response.json()) as { error: string };
      assert.equal(body.error, 'Unauthorized');
      assert.ok(!JSON.stringify(body).includes(SANDBOX_PASSWORD));
    }
    const fromUi = await codecCall('/codec/decode', { payloads: [] }, { origin: UI_ORIGIN });
    assert.equal(fromUi.headers.get('access-control-allow-origin'), UI_ORIGIN, 'the 401 carries CORS headers');
  });

  it('lets the codec token open nothing but decoding, and names the token-in-address form as gone', async () => {
    const api = await fetch(`${baseUrl}/api/connections`, { headers: { authorization: `Bearer ${CODEC_TOKEN}` } });
    assert.equal(api.status, 401);
    assert.match(((await api.json()) as { message: string }).message, /codec token opens \/codec\/decode only/);
    const page = await fetch(`${baseUrl}/`, { headers: { authorization: `Bearer ${CODEC_TOKEN}` } });
    assert.equal(page.status, 401);
    // Earlier builds put a token in the codec address, where logs and the Web UI's settings showed it.
    const old = await codecCall(`/codec/${CODEC_TOKEN}/decode`, { payloads: [toJson(startInput())] }, {});
    assert.equal(old.status, 410);
    const body = await old.text();
    assert.match(body, /no longer takes a token in its address/);
    assert.ok(!body.includes(SANDBOX_PASSWORD));
  });

  it('answers the Web UI preflight and refuses other origins', async () => {
    const preflight = await fetch(`${baseUrl}/codec/decode`, {
      method: 'OPTIONS',
      headers: { origin: UI_ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-namespace' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), UI_ORIGIN);
    assert.equal(preflight.headers.get('access-control-allow-credentials'), 'true');
    assert.match(preflight.headers.get('access-control-allow-methods') ?? '', /POST/);
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /x-namespace/);

    const evil = { origin: 'https://evil.example', cookie: `${COOKIE_NAME}=${encodeURIComponent(TOKEN)}` };
    const foreignPreflight = await fetch(`${baseUrl}/codec/decode`, { method: 'OPTIONS', headers: { ...evil, 'access-control-request-method': 'POST' } });
    assert.equal(foreignPreflight.status, 403);
    assert.equal(foreignPreflight.headers.get('access-control-allow-origin'), null);
    const foreign = await codecCall('/codec/decode', { payloads: [toJson(startInput())] }, evil);
    assert.equal(foreign.status, 403);
    assert.ok(!(await foreign.text()).includes(SANDBOX_PASSWORD));
  });

  it('encodes only with the encode token, never the console token, its cookie or the codec token; decodes what it encoded', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const plain = { metadata: { encoding: Buffer.from('json/plain').toString('base64') }, data: Buffer.from('{"hello":"world"}').toString('base64') };
    for (const [headers, path, status] of [
      [auth, '/codec/encode', 401],
      [{ cookie: `${COOKIE_NAME}=${encodeURIComponent(TOKEN)}` }, '/codec/encode', 401],
      [{ authorization: `Bearer ${CODEC_TOKEN}` }, '/codec/encode', 401],
      [{}, `/codec/${CODEC_TOKEN}/encode`, 410],
    ] as const) {
      const refused = await codecCall(path, { payloads: [plain] }, headers);
      assert.equal(refused.status, status, `${path} with ${Object.keys(headers).join(', ') || 'no credential'}`);
      assert.ok(!(await refused.text()).includes('binary/encrypted'));
    }
    // The temporal CLI encodes a query's (empty) arguments before it queries: a reader may encode nothing.
    for (const headers of [auth, { authorization: `Bearer ${CODEC_TOKEN}` }]) {
      const nothing = await codecCall('/codec/encode', { payloads: [] }, headers);
      assert.equal(nothing.status, 200);
      assert.deepEqual(await nothing.json(), { payloads: [] });
    }
    assert.equal((await codecCall('/codec/encode', { payloads: [] }, {})).status, 401, 'but not without a credential');
    // A console given no encode token decodes only, whoever asks.
    const decodeOnly = createConsoleServer({
      audit: tempAuditTrail(),
      connections: client,
      token: TOKEN,
      payloadCodecs: consoleCodecs,
      codecCorsOrigins: [UI_ORIGIN],
    });
    try {
      const refused = await codecCall('/codec/encode', { payloads: [plain] }, auth, (await decodeOnly.listen(0)).url);
      assert.equal(refused.status, 403);
      assert.match(((await refused.json()) as { message: string }).message, /decodes only: .*CONSOLE_CODEC_ENCODE_TOKEN/);
    } finally {
      await decodeOnly.close();
    }
    const encoded = (await (await codecCall('/codec/encode', { payloads: [plain] }, { authorization: `Bearer ${ENCODE_TOKEN}` })).json()) as {
      payloads: { metadata: Record<string, string>; data: string }[];
    };
    assert.equal(Buffer.from(encoded.payloads[0]?.metadata.encoding ?? '', 'base64').toString(), ENCRYPTED_ENCODING);
    const decoded = (await (await codecCall('/codec/decode', encoded, auth)).json()) as { payloads: unknown[] };
    assert.deepEqual(decoded.payloads, [plain]);
    // Protobuf JSON leaves out an empty list: the temporal CLI sends `{}` for an event without payloads.
    const empty = await codecCall('/codec/decode', {}, auth);
    assert.equal(empty.status, 200);
    assert.deepEqual(await empty.json(), { payloads: [] });
  });

  it('names the problem: a bad body, an unknown key id, a payload not sealed, a console without a key', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const bad = await codecCall('/codec/decode', { payloads: [{ data: 'not base64!' }] }, auth);
    assert.equal(bad.status, 400);
    assert.match(((await bad.json()) as { message: string }).message, /base64/);

    const [foreign] = await new EncryptionCodec({ keyId: 'retired-2019', key: randomBytes(32) }).encode([startInput()]);
    // A payload that can never be read here comes back as a JSON payload naming why (the Web UI shows
    // it in place of ciphertext); the event's other payloads still decode.
    const unknown = await codecCall('/codec/decode', { payloads: [toJson(foreign ?? assert.fail()), toJson(startInput())] }, auth);
    assert.equal(unknown.status, 200);
    const [described, readable] = ((await unknown.json()) as { payloads: { metadata: Record<string, string>; data: string }[] }).payloads;
    const fromBase64 = (value: string | undefined) => Buffer.from(value ?? '', 'base64').toString('utf8');
    assert.equal(fromBase64(described?.metadata.encoding), 'json/plain');
    const state = (JSON.parse(fromBase64(described?.data)) as { undecodable: { state: string; keyId: string; message: string } }).undecodable;
    assert.equal(state.state, 'unknown-key');
    assert.equal(state.keyId, 'retired-2019');
    assert.match(state.message, /retired-2019/);
    assert.equal(fromBase64(readable?.metadata.encoding), 'json/plain');
    assert.match(fromBase64(readable?.data), /SandboxBank|customerId/, 'the other payload of the same call decoded');

    // A payload that was never sealed is not trusted either: named, its content not echoed.
    const injected = {
      metadata: { encoding: Buffer.from('json/plain').toString('base64') },
      data: Buffer.from('{"responses":{"city":["Montreal"]}}').toString('base64'),
    };
    const unsealed = await codecCall('/codec/decode', { payloads: [injected] }, auth);
    assert.equal(unsealed.status, 200);
    const [notSealed] = ((await unsealed.json()) as { payloads: { metadata: Record<string, string>; data: string }[] }).payloads;
    const notSealedState = (JSON.parse(fromBase64(notSealed?.data)) as { undecodable: { state: string; encoding: string; message: string } }).undecodable;
    assert.deepEqual([notSealedState.state, notSealedState.encoding], ['not-sealed', 'json/plain']);
    assert.match(notSealedState.message, /^payload not sealed/);
    assert.ok(!fromBase64(notSealed?.data).includes('Montreal'), 'the unsealed content is not echoed');

    const off = await codecCall('/codec/decode', { payloads: [] }, auth, plainUrl);
    assert.equal(off.status, 404);
    assert.match(((await off.json()) as { message: string }).message, /payload encryption is off on this console \(PAYLOAD_ENCRYPTION=off\)/);
    assert.equal((await codecCall('/codec/decode', { payloads: [] }, {}, plainUrl)).status, 401, 'the token comes first');
  });
});

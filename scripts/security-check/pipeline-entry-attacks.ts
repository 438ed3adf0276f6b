/**
 * security:check's attacks on the pipeline entry (src/pipeline-entry/): tenant A's pipeline key
 * on tenant B's connection (its state and a cancel) and on a start naming B; a completion callback's
 * result claimed with another event's token; a result claimed a second time; and a callback to an
 * address out of the tenant's list (the cloud's metadata service), through the entry and past it. The entry runs on the
 * run's pipeline client (the vault-transit codec), with a key file per tenant; the worker process
 * delivers A's callbacks to a receiver of this run (CALLBACK_URLS, CALLBACK_SECRET_FILES and
 * PIPELINE_ENTRY_URL in its environment: pipelineEntryWorkerEnv, before the fleet starts).
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { AuditTrail } from '../../src/audit/audit-trail.js';
import { FileAuditStore } from '../../src/audit/file-audit-store.js';
import { ConnectionFailedError, ConnectionNotFoundError, type ConnectionsClient } from '../../src/client/index.js';
import { createPipelineEntryServer, type PipelineEntryServer } from '../../src/pipeline-entry/app.js';
import { mintPipelineKey, PipelineKeys } from '../../src/identity/pipeline-keys.js';
import type { CallbackEvent } from '../../src/contract/callbacks/callback-definitions.js';
import { liveInput, type AttackResult } from './attacks.js';

/** Where the worker says results are fetched: the attacks send the reference's path to their own entry. */
const ENTRY_URL = 'https://pipelines.security-check.invalid';
const DELIVERY_WAIT_MS = 60_000;

/** A lender's webhook receiver: records each event's body by its webhook-id, answers 200. */
export interface CallbackReceiver {
  readonly origin: string;
  readonly events: Map<string, string>;
  close(): Promise<void>;
}

export async function startCallbackReceiver(): Promise<CallbackReceiver> {
  const events = new Map<string, string>();
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      events.set(String(request.headers['webhook-id']), Buffer.concat(chunks).toString('utf8'));
      response.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    events,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The worker's callback settings for tenant A: its receiver's prefix, a secret file in the run directory. */
export function pipelineEntryWorkerEnv(runDir: string, tenant: string, receiver: CallbackReceiver): Record<string, string> {
  const secretFile = join(runDir, `${tenant}.webhook-secrets`);
  writeFileSync(secretFile, `whsec_${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
  return { CALLBACK_URLS: `${tenant}=${receiver.origin}/hooks`, CALLBACK_SECRET_FILES: `${tenant}=${secretFile}`, PIPELINE_ENTRY_URL: ENTRY_URL };
}

export interface PipelineEntryTarget {
  readonly runDir: string;
  readonly connections: ConnectionsClient;
  readonly receiver: CallbackReceiver;
  readonly tenant: string;
  readonly otherTenant: string;
  /** Tenant B's connection awaiting an answer, at `connection-<B>:<otherApplicationId>`. */
  readonly otherApplicationId: string;
  /** The sandbox: a saved login of tenant A there makes a cached connection that completes at once. */
  readonly sandboxUrl: string;
}

export interface PipelineEntryAttacks {
  readonly results: AttackResult[];
  /** Tenant A's key: searched for in the run's argv and logs with the other secrets. */
  readonly secrets: { label: string; value: string }[];
}

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

/** A saved login of `customerId` at the sandbox (no challenges). */
async function savedLogin(sandboxUrl: string, customerId: string): Promise<string> {
  const response = await fetch(`${sandboxUrl}/sandbox/${encodeURIComponent(customerId)}/logins`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'no_mfa' }),
  });
  if (!response.ok) throw new Error(`security-check: the sandbox made no saved login: HTTP ${response.status}`);
  return ((await response.json()) as { LoginId: string }).LoginId;
}

async function exists(connections: ConnectionsClient, workflowId: string): Promise<boolean> {
  try {
    await connections.describe(workflowId);
    return true;
  } catch (error) {
    if (error instanceof ConnectionNotFoundError) return false;
    throw error;
  }
}

/** The five attacks, on an entry of this run (closed before they return). */
export async function pipelineEntryAttacks(target: PipelineEntryTarget): Promise<PipelineEntryAttacks> {
  const { runDir, connections, receiver, tenant, otherTenant } = target;
  const keyA = mintPipelineKey();
  const keyB = mintPipelineKey();
  const fileA = join(runDir, `${tenant}.pipeline-keys`);
  const fileB = join(runDir, `${otherTenant}.pipeline-keys`);
  writeFileSync(fileA, `${keyA.hash}\n`);
  writeFileSync(fileB, `${keyB.hash}\n`);
  const audit = new AuditTrail(new FileAuditStore(join(runDir, 'pipeline-entry-audit.jsonl')));
  const entry: PipelineEntryServer = createPipelineEntryServer({
    connections,
    keys: new PipelineKeys(
      new Map([
        [tenant, fileA],
        [otherTenant, fileB],
      ]),
    ),
    callbackUrls: new Map([[tenant, [`${receiver.origin}/hooks`]]]),
    audit,
    log: () => undefined,
  });
  const { url } = await entry.listen(0);
  const call = async (method: 'GET' | 'POST', path: string, bearer: string | undefined, body?: unknown): Promise<Answer> => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: {
        ...(bearer === undefined ? {} : { authorization: `Bearer ${bearer}` }),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json().catch(() => ({}))) as Record<string, unknown> };
  };
  try {
    const results: AttackResult[] = [];
    // 1. A's key on B's connection: the application id is looked up under A, so B's is out of reach.
    {
      const name = "tenant A's pipeline key on tenant B's connection";
      const otherWorkflowId = `connection-${otherTenant}:${target.otherApplicationId}`;
      const state = await call('GET', `/v1/connections/${target.otherApplicationId}`, keyA.key);
      const cancel = await call('POST', `/v1/connections/${target.otherApplicationId}/cancel`, keyA.key);
      const after = await connections.getState(otherWorkflowId);
      const refused = state.status === 404 && cancel.status === 404 && after.status === 'AwaitingAnswer';
      results.push({ name, refused, detail: `state: HTTP ${state.status}; cancel: HTTP ${cancel.status}; ${otherWorkflowId} ${after.status}` });
    }
    // 2. A's key starting a connection that names B (beside the input, and inside it).
    {
      const name = "tenant A's pipeline key starting a connection naming tenant B";
      const applicationId = `pipeline-entry-${randomBytes(4).toString('hex')}`;
      const { customerId: _a, ...connection } = liveInput(tenant);
      const beside = await call('POST', '/v1/connections', keyA.key, { applicationId, customerId: otherTenant, connection });
      const inside = await call('POST', '/v1/connections', keyA.key, { applicationId, connection: { ...connection, customerId: otherTenant } });
      const started =
        (await exists(connections, `connection-${otherTenant}:${applicationId}`)) || (await exists(connections, `connection-${tenant}:${applicationId}`));
      const refused = beside.status === 403 && inside.status === 403 && !started;
      results.push({
        name,
        refused,
        detail: `customerId beside the input: HTTP ${beside.status}; inside it: HTTP ${inside.status}; ${started ? 'a connection was started' : 'nothing started'}`,
      });
    }
    // 3 and 4: two completed connections of A with callbacks, their results by reference.
    const references: { path: string; token: string }[] = [];
    for (let index = 0; index < 2; index += 1) {
      const loginId = await savedLogin(target.sandboxUrl, tenant);
      const applicationId = `pipeline-entry-claim-${index}-${randomBytes(4).toString('hex')}`;
      const started = await call('POST', '/v1/connections', keyA.key, {
        applicationId,
        connection: { session: { kind: 'cached', loginId }, products: { accountsDetail: {} } },
        callback: { url: `${receiver.origin}/hooks/security-check` },
      });
      const runId = String(started.body.runId);
      if (started.status !== 202)
        throw new Error(
          `security-check: the pipeline entry did not start a connection with a callback: HTTP ${started.status} ${JSON.stringify(started.body)}`,
        );
      const deadline = Date.now() + DELIVERY_WAIT_MS;
      let event: string | undefined;
      while ((event = receiver.events.get(`msg_${runId}`)) === undefined) {
        if (Date.now() > deadline) throw new Error(`security-check: no callback for run ${runId} within ${DELIVERY_WAIT_MS / 1000} s`);
        await delay(200);
      }
      const reference = (JSON.parse(event) as CallbackEvent).data.resultRef;
      if (reference === undefined) throw new Error(`security-check: the callback of run ${runId} carries no result reference`);
      references.push({ path: new URL(reference.url).pathname, token: reference.token });
    }
    const [first, second] = references as [{ path: string; token: string }, { path: string; token: string }];
    {
      const name = "a result claim with another event's token";
      const crossed = await call('GET', first.path, second.token);
      const own = await call('GET', first.path, first.token);
      // The control: its own token opens it (so the refusal above was the token's, not a broken entry).
      const refused = crossed.status === 401 && own.status === 200;
      results.push({ name, refused, detail: `another event's token: HTTP ${crossed.status}; its own token: HTTP ${own.status}` });
    }
    {
      const name = 'a second claim of a result';
      const again = await call('GET', first.path, first.token);
      const refused = again.status === 410;
      results.push({ name, refused, detail: `the second claim: HTTP ${again.status} ${JSON.stringify(again.body.error ?? null)}` });
    }
    // 5. A callback out of the tenant's list: the cloud's metadata address, through the entry and past
    // it (the product's own client, sealed as a pipeline inside the namespace would start it).
    {
      const name = "a callback out of the tenant's list";
      const metadata = 'http://169.254.169.254/latest/meta-data/iam/security-credentials/';
      const loginId = await savedLogin(target.sandboxUrl, tenant);
      const connection = { session: { kind: 'cached' as const, loginId }, products: { accountsDetail: {} } };
      const throughEntry = await call('POST', '/v1/connections', keyA.key, {
        applicationId: `callback-out-${randomBytes(4).toString('hex')}`,
        connection,
        callback: { url: metadata },
      });
      const applicationId = `callback-out-${randomBytes(4).toString('hex')}`;
      const { workflowId } = await connections.start(`connection-${tenant}:${applicationId}`, {
        customerId: tenant,
        ...connection,
        callback: { url: metadata },
      });
      const failure = await connections.result(workflowId).then(
        () => 'completed',
        (error: unknown) => (error instanceof ConnectionFailedError ? `${error.type}: ${error.reason}` : String(error)),
      );
      const state = await connections.getState(workflowId);
      const refused =
        throughEntry.status === 400 &&
        /^InvalidConnectionInput: .*callback\.url: is not allowed/.test(failure) &&
        state.callback === undefined &&
        state.retrieved.length === 0;
      results.push({
        name,
        refused,
        detail: `through the entry: HTTP ${throughEntry.status}; past it: ${failure.slice(0, 160)}; ${state.callback === undefined ? 'no delivery started' : `a delivery ${state.callback.deliveryWorkflowId}`}`,
      });
    }
    return { results, secrets: [{ label: "tenant A's pipeline key", value: keyA.key }] };
  } finally {
    await entry.close();
    await audit.close();
  }
}

/**
 * What reaches the wire from TEMPORAL_API_KEY, and from a temporal.toml profile (its API key, CA,
 * server name and gRPC metadata): Temporal Cloud cannot be reached from here, so a TLS-terminating
 * HTTP/2 endpoint (a throwaway CA made with openssl, as prod-check --tls makes it) stands in for its
 * frontend and records the headers of every call. It answers UNIMPLEMENTED, which the clients'
 * Connection accepts from GetSystemInfo; the worker's NativeConnection may give up, after its first
 * call is recorded. What Cloud then does with the key is not tested here. Last, the operator CLI
 * reaches a real dev server with nothing but a profile.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { createSecureServer, type IncomingHttpHeaders } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Connection } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { NativeConnection } from '@temporalio/worker';
import { createPki, TLS_SERVER_NAME } from '../../scripts/prod-check/tls.js';
import { ConnectionsClient } from '../../src/client/connections.js';
import { EXIT_FAILED, EXIT_OK } from '../../src/cli/report.js';
import { runCli } from '../../src/cli/run-cli.js';
import { loadClientConfig } from '../../src/settings/client.js';
import { loadWorkerConfig } from '../../src/settings/worker.js';
import { connectFailureReason } from '../../src/temporal/connect-error.js';
import { temporalConnectionOptions } from '../../src/temporal/connection.js';
import { createDevEnvironment } from '../helpers/temporal.js';

const API_KEY = 'test-api-key-0123456789';

void describe('TEMPORAL_API_KEY on the wire', () => {
  const calls: IncomingHttpHeaders[] = [];
  let server: ReturnType<typeof createSecureServer>;
  let env: Record<string, string>;

  before(async () => {
    const pki = createPki(await mkdtemp(join(tmpdir(), 'api-key-')));
    server = createSecureServer({ cert: readFileSync(pki.server.cert), key: readFileSync(pki.server.key) });
    server.on('stream', (stream, headers) => {
      calls.push(headers);
      stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '12', 'grpc-message': 'a test endpoint' }, { endStream: true });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    // The CA only because this endpoint's certificate is private; Cloud's is signed by a public CA.
    env = {
      TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
      TEMPORAL_API_KEY: API_KEY,
      TEMPORAL_TLS_CA_PATH: pki.caCert,
      TEMPORAL_TLS_SERVER_NAME: TLS_SERVER_NAME,
      PAYLOAD_ENCRYPTION: 'off',
      PAYLOAD_STORE: 'off',
    };
  });

  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  void it("sends the key as `authorization: Bearer <key>` over TLS from the pipeline client's connection", async () => {
    const connection = await Connection.connect(await temporalConnectionOptions(loadClientConfig(env).temporal));
    await connection.close();
    const call = calls.find((headers) => String(headers['user-agent']).includes('grpc-node-js'));
    assert.ok(call, `no call from the client's connection; calls: ${JSON.stringify(calls)}`);
    assert.equal(call[':scheme'], 'https');
    assert.equal(call.authorization, `Bearer ${API_KEY}`);
  });

  void it("sends the key as `authorization: Bearer <key>` over TLS from the worker's NativeConnection", async () => {
    const before = calls.length;
    try {
      const connection = await NativeConnection.connect(await temporalConnectionOptions(loadWorkerConfig(env).temporal));
      await connection.close();
    } catch {
      // An endpoint that answers UNIMPLEMENTED may fail the connection: the recorded call is what counts.
    }
    const call = calls.slice(before)[0];
    assert.ok(call, 'no call from the worker connection');
    assert.equal(call[':scheme'], 'https');
    assert.equal(call.authorization, `Bearer ${API_KEY}`);
  });
});

void describe('a temporal.toml profile on the wire', () => {
  const calls: IncomingHttpHeaders[] = [];
  let server: ReturnType<typeof createSecureServer>;
  let env: Record<string, string>;

  before(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'profile-wire-'));
    const pki = createPki(dir);
    server = createSecureServer({ cert: readFileSync(pki.server.cert), key: readFileSync(pki.server.key) });
    server.on('stream', (stream, headers) => {
      calls.push(headers);
      stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '12', 'grpc-message': 'a test endpoint' }, { endStream: true });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    // What a Temporal Cloud profile holds (an API key, metadata), with this endpoint's private CA inline.
    const file = join(dir, 'temporal.toml');
    writeFileSync(
      file,
      [
        '[profile.staging]',
        `address = "127.0.0.1:${port}"`,
        'namespace = "staging.acct"',
        `api_key = "${API_KEY}"`,
        '[profile.staging.tls]',
        `server_name = "${TLS_SERVER_NAME}"`,
        `server_ca_cert_data = """${readFileSync(pki.caCert, 'utf8')}"""`,
        '[profile.staging.grpc_meta]',
        'x-team = "lending"',
        '',
      ].join('\n'),
    );
    // Only Temporal's variables: none of ours.
    env = { TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'staging', TEMPORAL_GRPC_META_X_DEPLOY: 'blue', PAYLOAD_ENCRYPTION: 'off', PAYLOAD_STORE: 'off' };
  });

  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  void it("sends the profile's API key and gRPC metadata over TLS, trusting its CA, from the client's and the worker's connections", async () => {
    const connection = await Connection.connect(await temporalConnectionOptions(loadClientConfig(env).temporal));
    await connection.close();
    const call = calls.find((headers) => String(headers['user-agent']).includes('grpc-node-js'));
    assert.ok(call, `no call from the client's connection; calls: ${JSON.stringify(calls)}`);
    assert.equal(call[':scheme'], 'https');
    assert.equal(call.authorization, `Bearer ${API_KEY}`);
    assert.equal(call['x-team'], 'lending');
    assert.equal(call['x-deploy'], 'blue', 'TEMPORAL_GRPC_META_* adds to the profile');

    const before = calls.length;
    try {
      const native = await NativeConnection.connect(await temporalConnectionOptions(loadWorkerConfig(env).temporal));
      await native.close();
    } catch {
      // An endpoint that answers UNIMPLEMENTED may fail the connection: the recorded call is what counts.
    }
    const workerCall = calls.slice(before)[0];
    assert.ok(workerCall, 'no call from the worker connection');
    assert.equal(workerCall.authorization, `Bearer ${API_KEY}`);
    assert.equal(workerCall['x-team'], 'lending');
  });

  void it('says where the settings came from when a connection fails', async () => {
    const { temporal } = loadClientConfig(env);
    const reason = await connectFailureReason(
      { ...temporal, address: '127.0.0.1:1', transport: { tls: false } },
      new Error('Failed to connect before the deadline'),
    );
    const where = `profile "staging" of ${env.TEMPORAL_CONFIG_FILE}`;
    assert.equal(
      reason,
      `Failed to connect before the deadline (settings: address, namespace, API key, TLS, TLS server name, server CA certificate from ${where}; ` +
        `gRPC metadata from ${where}, TEMPORAL_GRPC_META_*; the rest from TEMPORAL_* variables and defaults)`,
    );
  });
});

void describe('a real dev server reached through a profile only', () => {
  let devEnv: TestWorkflowEnvironment;
  let dir: string;

  before(async () => {
    devEnv = await createDevEnvironment();
    dir = await mkdtemp(join(tmpdir(), 'profile-dev-'));
    writeFileSync(
      join(dir, 'temporal.toml'),
      [
        `[profile.dev]`,
        `address = "${devEnv.address}"`,
        'namespace = "default"',
        '',
        `[profile.nowhere]`,
        `address = "${devEnv.address}"`,
        'namespace = "no-such-namespace"',
        '',
      ].join('\n'),
    );
  });

  after(async () => {
    await devEnv.teardown();
  });

  /** The operator CLI, in-process, connecting for real with nothing but TEMPORAL_CONFIG_FILE and TEMPORAL_PROFILE for Temporal. */
  async function cli(profile: string, args: string[]): Promise<{ code: number; out: string; err: string }> {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(args, {
      out: (line) => out.push(line),
      err: (line) => err.push(line),
      readStdin: () => Promise.resolve(''),
      env: { TEMPORAL_CONFIG_FILE: join(dir, 'temporal.toml'), TEMPORAL_PROFILE: profile, PAYLOAD_ENCRYPTION: 'off', PAYLOAD_STORE: 'off' },
      connect: (config) => ConnectionsClient.connect(config),
      now: () => Date.now(),
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      program: 'connections',
    });
    return { code, out: out.join('\n'), err: err.join('\n') };
  }

  void it("lists connections from the profile's server and namespace", async () => {
    const result = await cli('dev', ['list', '--all', '--customer', `profile-${randomUUID()}`]);
    assert.deepEqual(result, { code: EXIT_OK, out: 'no connections', err: '' });
    // The profile's namespace is the one asked: a namespace the server lacks is refused by it.
    const elsewhere = await cli('nowhere', ['list', '--all']);
    assert.equal(elsewhere.code, EXIT_FAILED, elsewhere.out);
    assert.match(elsewhere.err, /no-such-namespace/);
  });
});

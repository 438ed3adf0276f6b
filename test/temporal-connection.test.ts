/**
 * What reaches the wire from TEMPORAL_API_KEY: Temporal Cloud cannot be reached from here, so a
 * TLS-terminating HTTP/2 endpoint (a throwaway CA made with openssl, as prod-check --tls makes it)
 * stands in for its frontend and records the headers of every call. It answers UNIMPLEMENTED, which
 * the clients' Connection accepts from GetSystemInfo; the worker's NativeConnection may give up,
 * after its first call is recorded. What Cloud then does with the key is not tested here.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { createSecureServer, type IncomingHttpHeaders } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { createPki, TLS_SERVER_NAME } from '../scripts/prod-check/tls.js';
import { loadClientConfig, loadWorkerConfig } from '../src/config.js';
import { temporalConnectionOptions } from '../src/temporal-connection.js';

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
    env = { TEMPORAL_ADDRESS: `127.0.0.1:${port}`, TEMPORAL_API_KEY: API_KEY, TEMPORAL_TLS_CA_PATH: pki.caCert, TEMPORAL_TLS_SERVER_NAME: TLS_SERVER_NAME, PAYLOAD_ENCRYPTION: 'off', PAYLOAD_STORE: 'off' };
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

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  connectionKey,
  InvalidBusinessKeyError,
  InvalidConnectionInputError,
  parseBusinessKey,
  quoteVisibilityValue,
  serviceCodeOf,
  visibilityQuery,
} from '../../src/client/index.js';
import { loadClientConfig } from '../../src/settings/client.js';
import { loadConsoleConfig } from '../../src/settings/console.js';
import { ConfigError } from '../../src/settings/load.js';
import { UsageError } from '../../src/cli/args.js';
import { responsesFromPairs } from '../../src/cli/commands/answer.js';

void describe('business keys', () => {
  void it('builds connection-<customerId>:<applicationId>', () => {
    assert.equal(connectionKey('demo-lender', 'app-42'), 'connection-demo-lender:app-42');
  });

  void it('gives two tenants different keys even when a dash could split them either way', () => {
    assert.notEqual(connectionKey('demo', 'lender-app1'), connectionKey('demo-lender', 'app1'));
    assert.throws(() => parseBusinessKey(connectionKey('demo-lender', 'app1'), 'demo'), InvalidBusinessKeyError);
  });

  void it('refuses a key of another customer, naming the expected prefix', () => {
    assert.throws(
      () => parseBusinessKey('connection-other:app-1', 'demo-lender'),
      (error: unknown) => error instanceof InvalidBusinessKeyError && /must start with "connection-demo-lender:"/.test(error.message),
    );
    assert.throws(() => parseBusinessKey('connection-demo-lender:', 'demo-lender'), InvalidBusinessKeyError);
  });

  void it('refuses segments with spaces or slashes', () => {
    assert.throws(() => connectionKey('demo lender', 'a'), /customerId must start with a letter or digit/);
    assert.throws(() => connectionKey('demo-lender', 'a/b'), /applicationId/);
  });
});

void describe('visibility queries', () => {
  void it('filters by workflow type and status, with every value quoted', () => {
    assert.equal(
      visibilityQuery({ status: 'AwaitingAnswer' }),
      'WorkflowType = "connectionWorkflow" AND ConnectionStatus = "AwaitingAnswer" AND ExecutionStatus = "Running"',
      'a terminated connection keeps its last status: not waiting',
    );
    assert.equal(visibilityQuery({ status: 'Completed' }), 'WorkflowType = "connectionWorkflow" AND ConnectionStatus = "Completed"');
    assert.equal(
      visibilityQuery({ customerId: 'demo-lender', institution: 'Bank "A"', loginId: 'x\\y' }),
      'WorkflowType = "connectionWorkflow" AND CustomerId = "demo-lender" AND Institution = "Bank \\"A\\"" AND LoginId = "x\\\\y"',
    );
  });

  void it('refuses control characters in a filter value', () => {
    assert.throws(() => quoteVisibilityValue('a\nb'), InvalidConnectionInputError);
  });
});

void describe('failure details', () => {
  void it('reads the service code from the first detail that has one', () => {
    assert.equal(serviceCodeOf([{ operation: 'Authorize', serviceCode: 'INVALID_PASSWORD' }]), 'INVALID_PASSWORD');
    assert.equal(serviceCodeOf(['RETRY_LATER']), 'RETRY_LATER');
    assert.equal(serviceCodeOf([{ operation: 'Authorize' }]), undefined);
    assert.equal(serviceCodeOf(undefined), undefined);
  });
});

void describe('client configuration', () => {
  void it('defaults to a local server, the default namespace, our task queue and the demo tenant', () => {
    const { encryption, payloadStore, ...rest } = loadClientConfig({});
    assert.equal(payloadStore.kind, 'local', 'large payloads go to the local store by default');
    assert.deepEqual(rest, {
      temporal: { address: 'localhost:7233', namespace: 'default', taskQueue: 'aggregation-connections', transport: { tls: false } },
      identity: undefined,
      customerId: 'demo-lender',
      deployment: { name: 'aggregation-connections' },
      priority: { keys: { live: 1, pipeline: 2, scheduled: 3, maintenance: 4 }, tenantWeights: new Map() },
      budget: undefined,
      books: { window: { floor: 2, ceiling: 50, start: 4 }, pageSize: 500 },
      // Book refreshes on the service queue itself unless UNATTENDED_POOL=separate.
      pools: { unattended: 'shared', unattendedTaskQueue: 'aggregation-connections', admission: 'off' },
    });
    assert.match(encryption?.keyId ?? '', /^local-/, 'payloads are encrypted by default, with the local key');
    assert.equal(loadClientConfig({ TEMPORAL_ADDRESS: 'temporal:7233', TEMPORAL_NAMESPACE: '', PAYLOAD_ENCRYPTION: 'off' }).temporal.namespace, 'default');
  });

  void it('refuses book defaults that do not fit together, naming the variable', () => {
    assert.throws(
      () => loadClientConfig({ BOOK_WINDOW_FLOOR: '10', BOOK_WINDOW_CEILING: '5', BOOK_WINDOW_START: '5' }),
      (error: unknown) => error instanceof ConfigError && /BOOK_WINDOW_FLOOR: must not exceed BOOK_WINDOW_CEILING \(5\)/.test(error.message),
    );
    assert.throws(() => loadClientConfig({ BOOK_WINDOW_START: '99' }), /BOOK_WINDOW_START: must be from BOOK_WINDOW_FLOOR \(2\) to BOOK_WINDOW_CEILING \(50\)/);
    assert.throws(() => loadClientConfig({ BOOK_PAGE_SIZE: 'lots' }), /BOOK_PAGE_SIZE/);
    assert.throws(() => loadClientConfig({ BOOK_WINDOW_CEILING: '0' }), /BOOK_WINDOW_CEILING: must be a whole number from 1 to 1000/);
  });

  void it('refuses to configure the console without a token or a provider to sign operators in, saying how to set one', () => {
    assert.throws(
      () => loadConsoleConfig({}),
      (error: unknown) => error instanceof ConfigError && /CONSOLE_TOKEN: is required unless operators sign in/.test(error.message),
    );
    assert.throws(() => loadConsoleConfig({ CONSOLE_TOKEN: 'short' }), /at least 16 characters/);
    assert.throws(() => loadConsoleConfig({ CONSOLE_TOKEN: 'a'.repeat(20), CONSOLE_PORT: 'eighty' }), /CONSOLE_PORT/);
    assert.deepEqual(loadConsoleConfig({ CONSOLE_TOKEN: 'a'.repeat(20), PAYLOAD_ENCRYPTION: 'off', PAYLOAD_STORE: 'off' }), {
      port: 8080,
      host: '127.0.0.1',
      mode: 'development',
      token: 'a'.repeat(20),
      signIn: undefined,
      codecToken: undefined,
      codecEncodeToken: undefined,
      codecCorsOrigins: ['http://localhost:8233', 'http://127.0.0.1:8233'],
      auditStore: 'file:.temporal/audit.jsonl',
      payloadStore: { kind: 'off' },
    });
  });
});

void describe('raw --prompt/--value answers', () => {
  void it('pairs each --value with the --prompt before it, in command-line order', () => {
    const tokens = [
      { kind: 'option', name: 'prompt', value: 'Q1' },
      { kind: 'option', name: 'value', value: 'a' },
      { kind: 'option', name: 'value', value: 'b' },
      { kind: 'positional', value: 'wf' },
      { kind: 'option', name: 'prompt', value: 'Q2' },
      { kind: 'option', name: 'value', value: 'c' },
    ];
    assert.deepEqual(responsesFromPairs(tokens), { Q1: ['a', 'b'], Q2: ['c'] });
  });

  void it('refuses a prompt without a value and a prompt given twice', () => {
    assert.throws(
      () => responsesFromPairs([{ kind: 'option', name: 'prompt', value: 'Q1' }]),
      (error: unknown) => error instanceof UsageError && /has no --value/.test(error.message),
    );
    assert.throws(
      () =>
        responsesFromPairs([
          { kind: 'option', name: 'prompt', value: 'Q' },
          { kind: 'option', name: 'value', value: 'x' },
          { kind: 'option', name: 'prompt', value: 'Q' },
        ]),
      /is given twice/,
    );
  });
});

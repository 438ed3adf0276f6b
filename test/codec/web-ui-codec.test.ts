/**
 * The Web UI reads encrypted histories, as `npm start` wires it: a dev server with its Web UI whose
 * codec setting points at the console's codec with `includeCredentials` (the browser sends the
 * console's cookie; no token in the UI's public settings), a worker encrypting payloads, and headless
 * Chromium opening the connection's page after opening the console once. The Input panel shows the
 * decoded input (its password shown as given, never itself) while the stored history holds ciphertext; a browser that never opened the console
 * is refused by the codec. Screenshot in artifacts/web-ui/;
 * docs/images/web-ui.png is taken by `npm run docs:screenshots` (test/helpers/docs-screenshot.ts).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { chromium, type Browser } from 'playwright-core';
import { ConnectionsClient } from '../../src/client/index.js';
import { createConsoleServer, type ConsoleServer } from '../../src/console/app.js';
import { dataConverterFor } from '../../src/codec/data-converter.js';
import { REDACTED } from '../../src/contract/connection/credential-fields.js';
import { SANDBOX_PASSWORD } from '../../sandbox/scenarios.js';
import { startDevEnvironment } from '../../scripts/lib/dev-environment.js';
import { freePort } from '../../scripts/lib/free-port.js';
import { TEST_ENCRYPTION, startConnectionStack, type ConnectionStack } from '../helpers/connection-stack.js';
import { docsScreenshot } from '../helpers/docs-screenshot.js';
import { fetchRawHistory } from '../helpers/raw-history.js';
import { uniqueId } from '../helpers/temporal.js';
import { loadTestConfig } from '../../scripts/lib/test-settings.js';
import { tempAuditTrail } from '../helpers/audit.js';

const CHROMIUM = loadTestConfig().chromiumPath;
const TOKEN = `web-ui-${uniqueId('token')}`;
/** Appears in the connection's input only (the workflow id and search attributes do not carry it). */
const USERNAME = 'security_question';

let env: TestWorkflowEnvironment;
let stack: ConnectionStack;
let consoleServer: ConsoleServer;
let browser: Browser;
let uiUrl: string;
let consoleUrl: string;

before(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium, or set CHROMIUM_PATH`);
  const [uiPort, consolePort] = [await freePort(), await freePort()];
  uiUrl = `http://127.0.0.1:${uiPort}`;
  consoleUrl = `http://127.0.0.1:${consolePort}`;
  env = await startDevEnvironment({ ui: { port: uiPort, codecEndpoint: `${consoleUrl}/codec` } });
  stack = await startConnectionStack(env);
  consoleServer = createConsoleServer({
    audit: tempAuditTrail(),
    connections: new ConnectionsClient({ client: stack.client, taskQueue: stack.taskQueue }),
    token: TOKEN,
    payloadCodecs: dataConverterFor({ encryption: TEST_ENCRYPTION })?.payloadCodecs,
    codecCorsOrigins: [uiUrl],
  });
  await consoleServer.listen(consolePort, '127.0.0.1');
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
});

after(async () => {
  await browser?.close();
  await consoleServer?.close();
  await stack?.stop();
  await env?.teardown();
});

describe('the Web UI of an encrypted stack', () => {
  it("shows a connection's decoded input through the console's codec, while the history holds ciphertext", async () => {
    const handle = await stack.start({
      session: { kind: 'live', institution: 'SandboxBank', username: USERNAME, password: SANDBOX_PASSWORD, save: true },
      products: { accountsDetail: {} },
    });
    await stack.waitForState(handle.workflowId, (state) => state.status === 'AwaitingAnswer', 'a challenge');
    const raw = await fetchRawHistory(env.connection, env.namespace ?? 'default', handle.workflowId);
    assert.ok(!raw.bytes.includes(USERNAME), 'the stored history does not hold the input in clear');

    // The UI's settings are served to anyone who reaches it: they name the codec, and carry no credential.
    const settings = (await (await fetch(`${uiUrl}/api/v1/settings`)).json()) as { Codec?: { Endpoint?: string; IncludeCredentials?: boolean } };
    assert.equal(settings.Codec?.Endpoint, `${consoleUrl}/codec`);
    assert.equal(settings.Codec?.IncludeCredentials, true);
    assert.ok(!JSON.stringify(settings).includes(TOKEN), 'no console token in the Web UI settings');

    const workflowPage = `${uiUrl}/namespaces/default/workflows/${encodeURIComponent(handle.workflowId)}`;
    // A browser that never opened the console: the codec refuses it (its body, the same 401 for any
    // caller without a credential, is read in encrypted-history.test.ts).
    const stranger = await browser.newContext();
    try {
      const page = await stranger.newPage();
      const refusal = page.waitForResponse((response) => response.url().startsWith(`${consoleUrl}/codec/decode`) && response.request().method() === 'POST', {
        timeout: 30_000,
      });
      await page.goto(workflowPage);
      const refused = await refusal;
      assert.equal(refused.status(), 401);
    } finally {
      await stranger.close();
    }

    const page = await browser.newPage();
    try {
      // The operator opens the console once (its cookie), then the Web UI in the same browser.
      await page.goto(`${consoleUrl}/?token=${encodeURIComponent(TOKEN)}`);
      await page.goto(workflowPage);
      // The Input panel renders the payload the codec decoded: the username is only there.
      await page.getByText(USERNAME).first().waitFor({ timeout: 30_000 });
      // ...and that a password was given, never the password: the codec redacts it for every viewer.
      await page.getByText(REDACTED).first().waitFor({ timeout: 30_000 });
      assert.equal(await page.getByText(SANDBOX_PASSWORD).count(), 0, 'the Web UI shows no password');
      await mkdir('artifacts/web-ui', { recursive: true });
      await page.screenshot({ path: 'artifacts/web-ui/decoded-input.png', fullPage: true });
      await docsScreenshot(page, 'web-ui');
    } finally {
      await page.close();
      await handle.cancel();
    }
  });
});

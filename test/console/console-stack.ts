/**
 * What the console's page tests share: the whole stack (real dev server, worker, sandbox), the
 * console's HTTP server on it with a test token, and headless Chromium with one browser context.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { chromium } from 'playwright-core';
import type { Browser, BrowserContext } from 'playwright-core';
import { createConsoleServer, type ConsoleServer } from '../../src/console/app.js';
import type { ConnectionsClient } from '../../src/client/index.js';
import { loadTestConfig } from '../../scripts/lib/test-settings.js';
import type { ConnectionStack } from '../helpers/connection-stack.js';
import { uniqueId } from '../helpers/temporal.js';
import { startClientStack, stopClientStack } from '../client/client-stack.js';
import { tempAuditTrail } from '../helpers/audit.js';
import type { AuditTrail } from '../../src/audit/audit-trail.js';

const CHROMIUM = loadTestConfig().chromiumPath;
/** Where the page tests leave their screenshots (gitignored). */
export const CONSOLE_ARTIFACTS = fileURLToPath(new URL('../../artifacts/console/', import.meta.url));
/** The console's token in these tests. */
export const CONSOLE_TEST_TOKEN = `console-test-${uniqueId('token')}`;

export interface ConsoleStack {
  readonly env: TestWorkflowEnvironment;
  readonly stack: ConnectionStack;
  readonly client: ConnectionsClient;
  readonly consoleServer: ConsoleServer;
  /** The console's audit trail (a file of its own). */
  readonly audit: AuditTrail;
  readonly baseUrl: string;
  readonly browser: Browser;
  readonly context: BrowserContext;
}

export async function startConsoleStack(): Promise<ConsoleStack> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium, or set CHROMIUM_PATH`);
  await mkdir(CONSOLE_ARTIFACTS, { recursive: true });
  const { env, stack, client } = await startClientStack();
  const audit = tempAuditTrail();
  const consoleServer = createConsoleServer({ audit, connections: client, token: CONSOLE_TEST_TOKEN, defaultCustomerId: stack.customerId });
  const baseUrl = (await consoleServer.listen(0)).url;
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  return { env, stack, client, consoleServer, audit, baseUrl, browser, context };
}

export async function stopConsoleStack(shared: Partial<ConsoleStack> | undefined): Promise<void> {
  await shared?.context?.close();
  await shared?.browser?.close();
  await shared?.consoleServer?.close();
  await stopClientStack({ stack: shared?.stack, env: shared?.env });
}

/** Shared setup for the sandbox tests: plain fetch against an in-process sandbox, schema checks. */
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import type { z } from 'zod';
import { AuthorizeResponse, ErrorResponse } from '../../src/aggregator/schemas.js';
import { describeIssues } from '../../src/validation/parse-or-refuse.js';
import type { ScenarioListing } from '../../sandbox/scenarios.js';
import type { Sandbox } from '../../sandbox/server.js';

export interface Answer {
  status: number;
  body: unknown;
  text: string;
  headers: Headers;
}

/** A JSON client bound to one sandbox; `body` may be a string to send raw text. */
export function clientFor(sandbox: Sandbox) {
  return async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
    const response = await fetch(`${sandbox.url}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: response.status, body: parsed, text, headers: response.headers };
  };
}
export type Call = ReturnType<typeof clientFor>;

/** Asserts the body parses with the contract schema and returns the parsed value. */
export function parsesWith<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const result = schema.safeParse(body);
  if (!result.success) assert.fail(`body does not parse: ${describeIssues(result.error)}\n${JSON.stringify(body).slice(0, 500)}`);
  return result.data;
}

/** Asserts an error answer: status, service code, and that it parses as an ErrorResponse. */
export function assertError(answer: Answer, status: number, code?: string): void {
  assert.equal(answer.status, status, `expected HTTP ${status}, got ${answer.status}: ${answer.text.slice(0, 300)}`);
  const parsed = parsesWith(ErrorResponse, answer.body);
  assert.equal(parsed.HttpStatusCode, status);
  if (code !== undefined) assert.equal(parsed.ServiceCode, code, answer.text);
}

export async function listing(call: Call): Promise<{ asOf: string; scenarios: ScenarioListing[] }> {
  const answer = await call('GET', '/sandbox/scenarios');
  assert.equal(answer.status, 200);
  return answer.body as { asOf: string; scenarios: ScenarioListing[] };
}

let tenantCounter = 0;
/** A fresh customer id per test, so tests never share logins or attempt counters. */
export function freshTenant(label = 't'): string {
  tenantCounter += 1;
  return `${label}-${process.pid}-${tenantCounter}`;
}

/** Runs a scenario's whole live flow with the listed answers; returns the final 200 body. */
export async function authorizeLive(call: Call, tenant: string, scenario: ScenarioListing, save = true) {
  let answer = await call('POST', `/v3/${tenant}/BankingServices/Authorize`, {
    Institution: scenario.institution,
    Username: scenario.username,
    Password: scenario.password,
    MostRecentCached: false,
    Save: save,
  });
  for (const step of scenario.challengeSequence) {
    assert.equal(answer.status, 203, answer.text.slice(0, 300));
    const challenge = parsesWith(AuthorizeResponse, answer.body);
    assert.deepEqual(
      challenge.SecurityChallenges?.map((c) => c.Prompt),
      step.challenges.map((c) => c.Prompt),
    );
    answer = await call('POST', `/v3/${tenant}/BankingServices/Authorize`, { RequestId: challenge.RequestId, SecurityResponses: step.answer });
  }
  assert.equal(answer.status, 200, answer.text.slice(0, 300));
  return parsesWith(AuthorizeResponse, answer.body);
}

/** Creates a saved login through the admin API and opens a cached session on it. */
export async function cachedSession(call: Call, tenant: string, username: string, pendingPolls?: number) {
  const created = await call('POST', `/sandbox/${tenant}/logins`, pendingPolls === undefined ? { username } : { username, pendingPolls });
  assert.equal(created.status, 200, created.text);
  const { LoginId } = created.body as { LoginId: string };
  const answer = await call('POST', `/v3/${tenant}/BankingServices/Authorize`, { LoginId, MostRecentCached: true });
  assert.equal(answer.status, 200, answer.text);
  const authorized = parsesWith(AuthorizeResponse, answer.body);
  return { loginId: LoginId, requestId: authorized.RequestId };
}

/** Polls accounts detail until 200 (bounded); returns the number of 202 answers and the body. */
export async function fetchAccounts(call: Call, tenant: string, requestId: string, options: Record<string, unknown> = {}) {
  let answer = await call('POST', `/v3/${tenant}/BankingServices/GetAccountsDetail`, { RequestId: requestId, ...options });
  let pending = 0;
  while (answer.status === 202 && pending < 50) {
    pending += 1;
    answer = await call('GET', `/v3/${tenant}/BankingServices/GetAccountsDetailAsync/${requestId}`);
  }
  assert.equal(answer.status, 200, answer.text.slice(0, 300));
  return { pending, body: answer.body };
}

/** Polls `check` until it holds, for conditions that come true on the sandbox's own clock; fails after `timeoutMs`. */
export async function waitUntil(check: () => Promise<boolean>, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await delay(10);
  }
}

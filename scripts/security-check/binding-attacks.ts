/**
 * security:check's attacks on what a sealed payload is bound to and who may read it: a sealed answer
 * copied out of one connection's history into another connection of the same tenant (as a signal and
 * as an update), the applicant's password and answers read through the codec endpoint by each of its
 * credentials, and a signed-out operator's session kept in a copied cookie, with the trail that must
 * show the sign-in, the sign-out and who answered.
 */
import { randomUUID } from 'node:crypto';
import proto from '@temporalio/proto';
import { openAuditStore } from '../../src/audit/audit-trail.js';
import { SESSION_COOKIE } from '../../src/console/sign-in.js';
import { answerChallengeSignal, submitAnswerUpdate, type ConnectionState } from '../../src/contract/connection/connection-definitions.js';
import { REDACTED } from '../../src/contract/connection/credential-fields.js';
import { describeScenario, SANDBOX_PASSWORD, SCENARIOS } from '../../sandbox/scenarios.js';
import { decodeOptionalFailureToOptionalError } from '../../src/sdk/internals.js';
import { toJson } from '../../src/console/codec.js';
import { HttpBrowser } from '../lib/http-browser.js';
import { until, type AttackResult, type MessageTarget } from './attacks.js';
import type { SignInConsole } from './operator-attacks.js';
import { sealedPayloadsOf } from './tenant-attacks.js';

type RawPayload = proto.temporal.api.common.v1.IPayload;
const { EventType } = proto.temporal.api.enums.v1;

/** The sealed answer an update carried into `workflowId` (its accepted request's argument), as history holds it. */
async function sealedAnswerOf(target: MessageTarget, workflowId: string): Promise<RawPayload> {
  const { events } = await target.raw.workflow.getHandle(workflowId).fetchHistory();
  const accepted = events?.find(
    (event) =>
      event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED &&
      event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === submitAnswerUpdate.name,
  );
  const payload = accepted?.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.args?.payloads?.[0];
  if (!payload) throw new Error(`security-check: ${workflowId} has no accepted ${submitAnswerUpdate.name} in its history to copy`);
  return payload;
}

/**
 * The right answer, sealed by the product for one connection (read from its history), copied into
 * another connection of the same tenant as a signal and as an update: refused when the signal is
 * recorded as a rejection naming both workflows, the update fails naming them, and it still waits.
 */
export async function copiedSealedAnswer(target: MessageTarget, answeredWorkflowId: string, intoWorkflowId: string): Promise<AttackResult> {
  const name = "a sealed answer copied from one connection's history into another of the same tenant (signal and update)";
  const copied = await sealedAnswerOf(target, answeredWorkflowId);
  const misbound = new RegExp(`sealed for workflow "${answeredWorkflowId.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}" sent to workflow`);
  await target.raw.workflowService.signalWorkflowExecution({
    namespace: target.raw.options.namespace,
    workflowExecution: { workflowId: intoWorkflowId },
    signalName: answerChallengeSignal.name,
    input: { payloads: [copied] },
    identity: 'security-check attacker',
  });
  const state: ConnectionState = await until(async () => {
    const read = await target.connections.getState(intoWorkflowId);
    return read.lastRejection !== undefined || read.status !== 'AwaitingAnswer' ? read : undefined;
  }, `${intoWorkflowId} reacting to the copied answer`);
  const response = await target.raw.workflowService.updateWorkflowExecution({
    namespace: target.raw.options.namespace,
    workflowExecution: { workflowId: intoWorkflowId },
    request: { meta: { updateId: randomUUID(), identity: 'security-check attacker' }, input: { name: submitAnswerUpdate.name, args: { payloads: [copied] } } },
    waitPolicy: { lifecycleStage: proto.temporal.api.enums.v1.UpdateWorkflowExecutionLifecycleStage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_COMPLETED },
  });
  const failure = await decodeOptionalFailureToOptionalError(target.sealed.options.loadedDataConverter, response.outcome?.failure, {
    namespace: target.sealed.options.namespace,
    workflowId: intoWorkflowId,
  });
  const after = await target.connections.getState(intoWorkflowId);
  const signalRefused = state.status === 'AwaitingAnswer' && misbound.test(state.lastRejection?.message ?? '');
  const updateRefused = failure !== undefined && misbound.test(failure.message);
  const refused = signalRefused && updateRefused && after.status === 'AwaitingAnswer';
  return {
    name,
    refused,
    detail: refused
      ? `signal recorded as a rejection and update failed, both naming the workflow it was sealed for: ${failure.message.slice(0, 140)}`
      : `signal: status ${state.status}, rejection "${state.lastRejection?.message ?? ''}"; update: ${failure ? `failed "${failure.message}"` : 'APPLIED'}; now ${after.status}`,
  };
}

/**
 * Every sealed payload of an answered connection's history (its input with the applicant's password,
 * the answer, the Authorize activity's input) through the codec endpoint with each of its decode
 * credentials: refused when none of the decoded payloads holds the password or an answer's value, and
 * the decoded ones show them as given (so the payloads were read, not merely refused). The connection
 * is the triple question's, whose answers no holder's data holds (security_question's, Montreal, is
 * also a city of the sandbox's addresses).
 */
export async function credentialsThroughCodec(
  consoleUrl: string,
  credentials: readonly { readonly label: string; readonly token: string }[],
  target: MessageTarget,
): Promise<AttackResult> {
  const name = "the applicant's password and answers read through the codec endpoint, with each credential that may decode";
  const scenario = SCENARIOS.find((entry) => entry.username === 'triple_question');
  const answer = scenario && describeScenario(scenario).challengeSequence[0]?.answer;
  if (!scenario || !answer) throw new Error('security-check: the sandbox has no triple_question scenario');
  const { workflowId } = await target.connections.start(`connection-${target.customerId}:credentials-read`, {
    customerId: target.customerId,
    session: { kind: 'live', institution: scenario.institution, username: scenario.username, password: SANDBOX_PASSWORD },
    products: { accountsDetail: {} },
  });
  await until(async () => ((await target.connections.getState(workflowId)).status === 'AwaitingAnswer' ? true : undefined), `${workflowId} awaiting an answer`);
  await target.connections.answer(workflowId, { challengeSetId: '1', responses: answer });
  await target.connections.result(workflowId);
  const payloads = (await sealedPayloadsOf(target.raw, workflowId)).map(toJson);
  const secrets = [SANDBOX_PASSWORD, ...Object.values(answer).flat()];
  const seen: string[] = [];
  let redactions = 0;
  for (const { label, token } of credentials) {
    const response = await fetch(`${consoleUrl}/codec/decode`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ payloads }),
    });
    const decoded = ((await response.json().catch(() => ({}))) as { payloads?: { data?: string }[] }).payloads ?? [];
    const text = decoded.map((payload) => Buffer.from(payload.data ?? '', 'base64').toString('utf8')).join('\n');
    const leaked = secrets.filter((secret) => text.includes(secret));
    if (response.status !== 200 || decoded.length !== payloads.length)
      seen.push(`${label}: HTTP ${response.status}, ${decoded.length} of ${payloads.length} payload(s)`);
    // Where it showed (the text before it, the value itself left out), so a leak names its field.
    const where = leaked.map((secret) => JSON.stringify(text.slice(Math.max(0, text.indexOf(secret) - 80), text.indexOf(secret)))).join(', ');
    if (leaked.length > 0) seen.push(`${label}: ${leaked.length} credential value(s) SHOWN, after ${where}`);
    redactions += text.split(REDACTED).length - 1;
  }
  const refused = seen.length === 0 && redactions > 0 && payloads.length > 0;
  return {
    name,
    refused,
    detail: refused
      ? `${payloads.length} payload(s) of an answered connection decoded by ${credentials.map(({ label }) => label).join(' and ')}: no credential shown, ${redactions} shown as given`
      : `${seen.join('; ') || 'nothing redacted: the payloads were not read'}`,
  };
}

/**
 * A signed-in operator's session cookie copied before sign-out and used after it, and the trail of
 * it: refused when the copy answers 401 SessionEnded, and the tenant's trail holds the operator's
 * sign-in and sign-out and its connection's activity names the operator who answered it.
 */
export async function copiedCookieAfterSignOut(
  console_: SignInConsole,
  tenant: string,
  answeredThrough: {
    readonly answer: (operator: HttpBrowser) => Promise<number>;
    readonly activity: () => Promise<readonly { who: string; name?: string | undefined }[]>;
  },
): Promise<AttackResult> {
  const name = "a signed-out operator's session in a copied cookie, and the trail of who signed in, answered and signed out";
  const since = new Date();
  const operator = await console_.signedIn('operator-a');
  const answered = await answeredThrough.answer(operator);
  const copied = operator.cookies.get(SESSION_COOKIE) ?? '';
  await operator.request(`${console_.url}/auth/logout`);
  const thief = new HttpBrowser();
  thief.cookies.set(SESSION_COOKIE, copied);
  const after = await thief.request(`${console_.url}/api/me`);
  const code = after.status === 401 ? (JSON.parse(after.body) as { error?: string }).error : `HTTP ${after.status}`;
  const store = openAuditStore(console_.console.auditStore);
  let actions: string[];
  try {
    actions = (await store.query({ tenant, from: since, limit: 1_000 }))
      .filter((entry) => entry.actor.name === 'Operator of A')
      .map((entry) => `${entry.action}:${entry.outcome}`);
  } finally {
    await store.close();
  }
  const who = (await answeredThrough.activity()).find((entry) => entry.name === submitAnswerUpdate.name)?.who ?? '';
  const trailed = ['sign-in:ok', 'answer:ok', 'sign-out:ok'].every((action) => actions.includes(action));
  const named = /^console:Operator of A </.test(who);
  const refused = answered === 200 && code === 'SessionEnded' && trailed && named;
  return {
    name,
    refused,
    detail: `answer HTTP ${answered}; the copy after sign-out: ${code ?? ''}; tenant ${tenant}'s trail: ${actions.join(', ') || 'nothing'}; the connection's activity names "${who}"`,
  };
}

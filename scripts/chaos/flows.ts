/**
 * The scenario mix of a chaos run: every flow the README documents (challenge sequences answered by
 * update and by signal, a live refresh, no-MFA and pending data, cached accounts, investments and
 * attributes, transient upstream errors, and the error scenarios of the failure table), what each
 * connection must end with, and the answers the driver gives, taken from the sandbox's own listing.
 */
import type { ConnectionFailureType, ConnectionInputArgs, SecurityChallenge, SecurityResponses } from '../../src/client/index.js';
import { connectionKey } from '../../src/client/index.js';
import type { Random } from './random.js';

export type FlowGroup = 'challenge' | 'refresh' | 'no-mfa' | 'pending' | 'cached' | 'transient' | 'error';
export type ProductName = 'accountsDetail' | 'investments' | 'attributes';
type Products = ConnectionInputArgs['products'];

/** How the driver answers this flow's challenges. */
export type AnswerMode =
  | 'correct' // the listing's answer for whatever challenges are presented
  | 'wrong' // a different wrong answer each time, until the connection gives up
  | 'never'; // no answer at all (the connection abandons the challenge)

export type Expectation =
  { readonly status: 'Completed'; readonly products: readonly ProductName[] } | { readonly status: 'Failed'; readonly failureType: ConnectionFailureType };

export interface Flow {
  /** Short and unique: the row of the per-flow table. */
  readonly name: string;
  readonly group: FlowGroup;
  /** The sandbox scenario (the username selects it). */
  readonly username: string;
  readonly session: 'live' | 'cached' | 'refresh';
  readonly products: Products;
  readonly answers: AnswerMode;
  /** Overrides the run's (generous) answer timeout, for the abandoned-challenge flow. */
  readonly answerTimeoutMs?: number;
  readonly expect: Expectation;
}

const ACCOUNTS = { accountsDetail: { WithTransactions: true } } as const;
const completed = (...products: ProductName[]): Expectation => ({ status: 'Completed', products });
const failed = (failureType: ConnectionFailureType): Expectation => ({ status: 'Failed', failureType });

function live(name: string, group: FlowGroup, username: string, products: Products, expect: Expectation, answers: AnswerMode = 'correct'): Flow {
  return { name, group, username, session: 'live', products, answers, expect };
}

function productsOf(products: Products): ProductName[] {
  return (['accountsDetail', 'investments', 'attributes'] as const).filter((name) => products[name] !== undefined && products[name] !== false);
}

function expectingProducts(flow: Omit<Flow, 'expect'>): Flow {
  return { ...flow, expect: completed(...productsOf(flow.products)) };
}

/**
 * Interleaved by kind, so that a run with fewer connections than flows still mixes challenges,
 * cached data, transient and error scenarios. A connection i runs FLOWS[i % FLOWS.length].
 */
export const FLOWS: readonly Flow[] = [
  expectingProducts({ name: 'triple_question', group: 'challenge', username: 'triple_question', session: 'live', products: ACCOUNTS, answers: 'correct' }),
  expectingProducts({
    name: 'cached accounts (3 polls, 365 days)',
    group: 'cached',
    username: 'pending_polls_3',
    session: 'cached',
    products: { accountsDetail: { WithTransactions: true, DaysOfTransactions: 'Days365' } },
    answers: 'correct',
  }),
  live('invalid_password', 'error', 'invalid_password', ACCOUNTS, failed('InvalidCredentials')),
  expectingProducts({ name: 'two_step_code', group: 'challenge', username: 'two_step_code', session: 'live', products: ACCOUNTS, answers: 'correct' }),
  expectingProducts({
    name: 'cached investments (2 polls)',
    group: 'cached',
    username: 'pending_polls_2',
    session: 'cached',
    products: { investments: true },
    answers: 'correct',
  }),
  expectingProducts({
    name: 'no_mfa accounts + investments',
    group: 'no-mfa',
    username: 'no_mfa',
    session: 'live',
    products: { ...ACCOUNTS, investments: true },
    answers: 'correct',
  }),
  expectingProducts({ name: 'image_selection', group: 'challenge', username: 'image_selection', session: 'live', products: ACCOUNTS, answers: 'correct' }),
  expectingProducts({
    name: 'cached attributes (lending)',
    group: 'cached',
    username: 'no_mfa',
    session: 'cached',
    products: { attributes: { package: 'GetLendingAttributes' } },
    answers: 'correct',
  }),
  expectingProducts({ name: 'flaky_503', group: 'transient', username: 'flaky_503', session: 'live', products: ACCOUNTS, answers: 'correct' }),
  expectingProducts({
    name: 'security_question + attributes',
    group: 'challenge',
    username: 'security_question',
    session: 'live',
    products: { ...ACCOUNTS, attributes: { package: 'GetAllAttributes' } },
    answers: 'correct',
  }),
  live('unauthorized', 'error', 'unauthorized', ACCOUNTS, failed('EndUserActionRequired')),
  expectingProducts({ name: 'reset_questions', group: 'challenge', username: 'reset_questions', session: 'live', products: ACCOUNTS, answers: 'correct' }),
  expectingProducts({
    name: 'operation_dispatched',
    group: 'pending',
    username: 'operation_dispatched',
    session: 'live',
    products: ACCOUNTS,
    answers: 'correct',
  }),
  expectingProducts({
    name: 'refresh trusted_device',
    group: 'refresh',
    username: 'trusted_device',
    session: 'refresh',
    products: ACCOUNTS,
    answers: 'correct',
  }),
  expectingProducts({ name: 'retry_later_twice', group: 'transient', username: 'retry_later_twice', session: 'live', products: ACCOUNTS, answers: 'correct' }),
  expectingProducts({
    name: 'token_code + investments',
    group: 'challenge',
    username: 'token_code',
    session: 'live',
    products: { ...ACCOUNTS, investments: true },
    answers: 'correct',
  }),
  live('wrong answers', 'error', 'security_question', ACCOUNTS, failed('InvalidSecurityResponse'), 'wrong'),
  expectingProducts({ name: 'loading', group: 'pending', username: 'loading', session: 'live', products: ACCOUNTS, answers: 'correct' }),
  expectingProducts({ name: 'trusted_device', group: 'challenge', username: 'trusted_device', session: 'live', products: ACCOUNTS, answers: 'correct' }),
  expectingProducts({ name: 'flaky_reset', group: 'transient', username: 'flaky_reset', session: 'live', products: ACCOUNTS, answers: 'correct' }),
  live('disabled_institution', 'error', 'disabled_institution', ACCOUNTS, failed('InstitutionUnavailable')),
  expectingProducts({ name: 'security_question', group: 'challenge', username: 'security_question', session: 'live', products: ACCOUNTS, answers: 'correct' }),
  expectingProducts({
    name: 'pending_polls_4 accounts + investments',
    group: 'pending',
    username: 'pending_polls_4',
    session: 'live',
    products: { ...ACCOUNTS, investments: true },
    answers: 'correct',
  }),
  expectingProducts({ name: 'rate_limited', group: 'transient', username: 'rate_limited', session: 'live', products: ACCOUNTS, answers: 'correct' }),
  { ...live('abandoned challenge', 'error', 'triple_question', ACCOUNTS, failed('ChallengeAbandoned'), 'never'), answerTimeoutMs: 4_000 },
  expectingProducts({ name: 'flaky_malformed', group: 'transient', username: 'flaky_malformed', session: 'live', products: ACCOUNTS, answers: 'correct' }),
  live('concurrent_session', 'error', 'concurrent_session', ACCOUNTS, failed('ServiceRejected')),
  expectingProducts({
    name: 'aggregation_error_once',
    group: 'transient',
    username: 'aggregation_error_once',
    session: 'live',
    products: ACCOUNTS,
    answers: 'correct',
  }),
  live('retry_later (5 attempts)', 'error', 'retry_later', ACCOUNTS, failed('InstitutionUnavailable')),
  expectingProducts({
    name: 'cached accounts + attributes (income)',
    group: 'cached',
    username: 'pending_polls_2',
    session: 'cached',
    products: { accountsDetail: {}, attributes: { package: 'GetIncomeAttributes' } },
    answers: 'correct',
  }),
];

export type AnswerChannel = 'update' | 'signal';

export interface ConnectionPlan {
  /** 0-based, in catalogue order (not start order). */
  readonly index: number;
  readonly flow: Flow;
  /** How answers are sent; meaningful for flows that answer. */
  readonly channel: AnswerChannel;
  /** A tenant of its own: scenario counters ("fails twice, then...") and saved logins never mix. */
  readonly customerId: string;
  readonly key: string;
  /** When to start it, in ms after the first start. */
  readonly startAtMs: number;
}

/**
 * N connections over the catalogue; the start order is shuffled by the seed. Answering connections
 * alternate between update and signal, and a flow that repeats switches channel each time.
 */
export function planConnections(count: number, runTag: string, startSpreadMs: number, random: Random): ConnectionPlan[] {
  let answering = 0;
  const plans = Array.from({ length: count }, (_, index) => {
    const flow = FLOWS[index % FLOWS.length] as Flow;
    const channel: AnswerChannel = flow.answers === 'never' ? 'update' : answering++ % 2 === 0 ? 'update' : 'signal';
    const customerId = `chaos-${runTag}-${index}`;
    return { index, flow, channel, customerId, key: connectionKey(customerId, `app-${index}`), startAtMs: 0 };
  });
  const order = random.shuffle(plans.map((plan) => plan.index));
  const step = count > 1 ? startSpreadMs / (count - 1) : 0;
  return order
    .map((index, position) => ({ ...(plans[index] as ConnectionPlan), startAtMs: Math.round(position * step) }))
    .sort((a, b) => a.startAtMs - b.startAtMs);
}

// ---- inputs ------------------------------------------------------------------------------------

export interface RunTiming {
  readonly pollIntervalMs: number;
  readonly pollTimeoutMs: number;
  readonly answerTimeoutMs: number;
}

/** The connection's input; `loginId` for cached and refresh sessions (a saved login made beforehand). */
export function connectionInput(plan: ConnectionPlan, scenario: ListedScenario, timing: RunTiming, loginId: string | undefined): ConnectionInputArgs {
  const { flow } = plan;
  let session: ConnectionInputArgs['session'];
  if (flow.session === 'live') {
    session = { kind: 'live', institution: scenario.institution, username: scenario.username, password: scenario.password, save: true };
  } else {
    if (loginId === undefined) throw new Error(`flow ${flow.name}: a ${flow.session} session needs a saved login`);
    session = { kind: flow.session, loginId };
  }
  return {
    customerId: plan.customerId,
    session,
    products: flow.products,
    timing: {
      pollIntervalMs: timing.pollIntervalMs,
      pollTimeoutMs: timing.pollTimeoutMs,
      answerTimeoutMs: flow.answerTimeoutMs ?? timing.answerTimeoutMs,
      maxAnswerAttempts: 3,
    },
  };
}

// ---- answers from the sandbox's listing -------------------------------------------------------

export interface ListedScenario {
  readonly username: string;
  readonly password: string;
  readonly institution: string;
  readonly challengeSequence: ReadonlyArray<{ readonly challenges: readonly SecurityChallenge[]; readonly answer: SecurityResponses }>;
}

export class ScenarioListingError extends Error {
  override readonly name = 'ScenarioListingError';
}

/** GET /sandbox/scenarios, indexed by username; every username of the catalogue must be listed. */
export async function fetchScenarioListing(sandboxUrl: string): Promise<ReadonlyMap<string, ListedScenario>> {
  const response = await fetch(`${sandboxUrl}/sandbox/scenarios`);
  if (!response.ok) throw new ScenarioListingError(`the sandbox refused its scenario listing: HTTP ${response.status}`);
  const body = (await response.json()) as { scenarios?: ListedScenario[] };
  const listing = new Map((body.scenarios ?? []).map((scenario) => [scenario.username, scenario]));
  for (const flow of FLOWS) {
    // pending_polls_<n> and the like are patterns, not listed entries: they take the defaults.
    if (!listing.has(flow.username) && !/_\d+$/.test(flow.username))
      throw new ScenarioListingError(`the sandbox lists no scenario ${flow.username} (flow ${flow.name})`);
  }
  return listing;
}

/** A listed scenario, or the shape every pattern scenario (pending_polls_<n>) has: SandboxBank, no MFA. */
export function scenarioFor(listing: ReadonlyMap<string, ListedScenario>, username: string): ListedScenario {
  const listed = listing.get(username);
  if (listed) return listed;
  const password = [...listing.values()][0]?.password ?? 'Everyday';
  return { username, password, institution: 'SandboxBank', challengeSequence: [] };
}

function promptsKey(challenges: readonly SecurityChallenge[]): string {
  return challenges
    .map((challenge) => `${challenge.Type}:${challenge.Prompt}`)
    .sort()
    .join('\n');
}

/**
 * The responses to the challenges presented now: the listed step whose prompts are exactly these
 * (matching by content, not by position, so a session reopened after a crash is answered from its
 * first step again). Undefined when no step matches.
 */
export function answerFor(
  scenario: ListedScenario,
  challenges: readonly SecurityChallenge[],
  mode: AnswerMode,
  attempt: number,
): SecurityResponses | undefined {
  if (mode === 'never') return undefined;
  const presented = promptsKey(challenges);
  const step = scenario.challengeSequence.find((candidate) => promptsKey(candidate.challenges) === presented);
  if (!step) return undefined;
  if (mode === 'correct') return step.answer;
  // Wrong but well-formed (the 'wrong answers' flow uses free-text questions only), and different
  // each time so that no wrong answer is ever the same submission twice.
  return Object.fromEntries(challenges.map((challenge) => [challenge.Prompt, [`not-the-answer-${attempt}`]]));
}

/**
 * The scenario catalogue: the username typed at Authorize selects one scenario (its institution,
 * password, challenge sequence, Authorize-time error and data-phase behaviour). Typed data, so the
 * server, GET /sandbox/scenarios and the tests all read the same source.
 */
import type { SecurityResponses } from '../src/aggregator/schemas.js';
import { SERVICE_CODES, type ServiceCode } from '../src/aggregator/failure-table.js';
import { correctResponses, publicChallenge, type ChallengeStep, type WireChallenge } from './challenges.js';
import { IMAGES, IMAGE_NAMES } from './images.js';
import type { LargeLoginSize } from './large-bank-data.js';
import type { Variation } from './variations.js';

/** Every scenario uses this password (shown again in the listing). */
export const SANDBOX_PASSWORD = 'Everyday';

/** Institutions of the sandbox; the numeric Id appears in investment answers' Institution object. */
export const INSTITUTIONS = {
  SandboxBank: 1001,
  SandboxTrust: 1002,
  SandboxPictureBank: 1003,
  SandboxTokenBank: 1004,
  SandboxCreditUnion: 1005,
  SandboxMobileBank: 1006,
  SandboxDeviceBank: 1007,
} as const satisfies Record<string, number>;
export type InstitutionName = keyof typeof INSTITUTIONS;

/**
 * `variation`: the realistic variations of issue 60 (answers written another way, a challenge type
 * the spec does not name, slow replies); kept out of `challenge` and `no-mfa`, which tests run
 * through every flow and which must stay the spec's exact shapes.
 */
export type ScenarioKind = 'no-mfa' | 'challenge' | 'authorize-error' | 'transient-error' | 'data-behaviour' | 'variation';

/**
 * A fault a scenario injects into its first data requests of each session. `unusable`: HTTP 200 with
 * an accounts-detail body echoing an applicant's data but without RequestId (faults.ts UNUSABLE_BODY).
 */
export type DataFaultKind = 'status-503' | 'reset' | 'rate-limit' | 'malformed' | 'unusable';

export interface DataBehaviour {
  /**
   * HTTP 202 answers each operation (accounts detail, summary, investments, attributes) gives before
   * 200; the operation is also complete once this many polls' worth of time (`pendingPollMs` each)
   * has passed since it started, polled or not.
   */
  readonly pendingPolls: number;
  /** When set, 202 until this many ms passed since the operation started (instead of counting polls). */
  readonly pendingMs?: number;
  /** The first answer of each operation is 202 OPERATION_DISPATCHED instead of OPERATION_PENDING. */
  readonly dispatchedFirst?: boolean;
  /** The first N data requests of each session answer 400 SESSION_LOADING. */
  readonly loadingRequests?: number;
  /** The first `times` data requests of each session fail this way (never touching state); times undefined: every one. */
  readonly fault?: { readonly kind: DataFaultKind; readonly times?: number };
}

export interface AuthorizeError {
  readonly code: ServiceCode;
  readonly httpStatus: number;
  /** Undefined: every live Authorize fails; n: the first n fail (per tenant), then the flow proceeds. */
  readonly times?: number;
}

/**
 * A reply the service takes long to give: the request is processed only once `SandboxOptions.slowReplyMs`
 * has passed (as a service still talking to the bank would), whether or not the caller is still
 * waiting; a caller that gave up meanwhile never hears of the outcome.
 */
export interface SlowReply {
  /** `answer`: Authorize calls carrying SecurityResponses; `authorize`: live Authorize calls with credentials. */
  readonly on: 'answer' | 'authorize';
  /** Undefined: every such call; n: the first n (per tenant), then at once. */
  readonly times?: number;
}

export interface Scenario {
  readonly username: string;
  readonly password: string;
  readonly institution: InstitutionName;
  readonly kind: ScenarioKind;
  readonly description: string;
  /** Challenge rounds after the credentials; empty for no MFA. */
  readonly steps: readonly ChallengeStep[];
  readonly authorizeError?: AuthorizeError;
  readonly data: DataBehaviour;
  /** Set for `large_<accounts>x<transactions>`: the generated accounts' sizes (business data). */
  readonly large?: LargeLoginSize;
  /**
   * Set when the login is protected by verification only the end user can pass: a live refresh of
   * the saved login asks its challenges again, so it cannot be refreshed unattended (the spec: two-step
   * accounts cannot be refreshed automatically). Other saved logins refresh without challenges: the
   * service answers their security questions from the answers it saved.
   */
  readonly endUserVerification?: 'two-step' | 'trusted-device';
  /** Representation variations of every answer of this login's sessions (variations.ts). */
  readonly variations?: readonly Variation[];
  readonly slowReply?: SlowReply;
}

const DEFAULT_DATA: DataBehaviour = { pendingPolls: 1 };

// --- challenge sequences of the spec ------------------------------------------------------------

const SECURITY_QUESTION: ChallengeStep = [{ Type: 'QuestionAndAnswer', Prompt: 'What city were you born in?', answer: 'Montreal' }];

const TRIPLE_QUESTION: ChallengeStep = [
  { Type: 'QuestionAndAnswer', Prompt: "What is your mother's maiden name?", answer: 'Tremblay' },
  { Type: 'QuestionAndAnswer', Prompt: 'What was the name of your first pet?', answer: 'Biscuit' },
  { Type: 'QuestionAndAnswer', Prompt: 'What is your favourite colour?', answer: 'Blue' },
];

/** Index of the correct image among the 16 (a lime cross). */
export const CORRECT_IMAGE_INDEX = 3;

const IMAGE_SELECTION: ChallengeStep = [
  {
    Type: 'ImageSelection',
    Prompt: 'Please select your personal security image',
    Iterables: IMAGES,
    answer: IMAGES[CORRECT_IMAGE_INDEX] ?? '',
  },
];

const TOKEN_CODE: ChallengeStep = [{ Type: 'QuestionAndAnswer', Prompt: 'Enter the 6-digit code shown on your SecurID token', answer: '123456' }];

const RESET_CHOICES: ChallengeStep = [
  {
    Type: 'MultipleChoice',
    Prompt: 'Which of these streets have you lived on?',
    Iterables: ['Rue Sherbrooke', 'Maple Avenue', 'King Street West', 'None of the above'],
    answer: 'Maple Avenue',
  },
  {
    Type: 'MultipleChoiceMultipleAnswers',
    Prompt: 'Which of these institutions have you held an account with? Select all that apply.',
    Iterables: ['SandboxCreditUnion', 'Northern Credit Union', 'Prairie Trust', 'Harbour Savings'],
    answers: ['SandboxCreditUnion', 'Prairie Trust'],
  },
];

const RESET_NEW_QUESTIONS: ChallengeStep = [1, 2, 3].map((n) => ({
  Type: 'QuestionAndAnswer' as const,
  Prompt: `Choose security question ${n} and provide its answer`,
  chooseQuestion: true as const,
  Iterables:
    [
      ['What was the make of your first car?', 'What is the name of your favourite teacher?', 'In what city did you meet your spouse?'],
      ['What was your childhood nickname?', 'What street did you grow up on?', "What is your oldest cousin's first name?"],
      ['What was the name of your first employer?', 'What is your favourite book?', 'Where did you go on your first holiday?'],
    ][n - 1] ?? [],
}));

const TEXT_OR_CALL: ChallengeStep = [{ Type: 'TextOrCall', Prompt: 'Where should we send your security code?', Iterables: ['***-***-4821', '***-***-7730'] }];
const TWO_STEP_CODE: ChallengeStep = [{ Type: 'QuestionAndAnswer', Prompt: 'Enter the security code we sent you', answer: '654321' }];

const TRUSTED_DEVICE: ChallengeStep = [
  { Type: 'WaitUntilEUAccept', Prompt: 'Open the SandboxDeviceBank app on your trusted device and accept the sign-in request' },
];

// A challenge type the spec does not name, as an institution adds one (answered by prompt, free text).
const SMS_CODE: ChallengeStep = [{ Type: 'SmsCode', Prompt: 'Enter the code we sent by SMS to ***-***-1234', answer: '246810' }];
const PLAIN_QUESTION: ChallengeStep = [
  { Type: 'QuestionAndAnswer', Prompt: 'What city were you born in?', answer: 'Montreal' },
  { Type: 'PlainQuestion', Prompt: 'What is the name of the street you grew up on?', answer: 'Maple Avenue' },
];

function scenario(fields: Omit<Scenario, 'password' | 'data' | 'steps'> & Partial<Pick<Scenario, 'data' | 'steps'>>): Scenario {
  return { password: SANDBOX_PASSWORD, steps: [], data: DEFAULT_DATA, ...fields };
}

// --- the catalogue ------------------------------------------------------------------------------

const AUTHORIZE_ERROR_CODES = [
  'INVALID_LOGIN',
  'INVALID_USERNAME',
  'INVALID_PASSWORD',
  'QUESTION_NOT_FOUND',
  'ALREADY_AUTHORIZED',
  'CONCURRENT_SESSION',
  'RETRY_LATER',
  'TOO_MANY_REQUESTS',
  'UNAUTHORIZED',
  'NEW_ACCOUNT',
  'DISABLED_LOGIN',
  'DISABLED_INSTITUTION',
  'AGGREGATION_ERROR',
] as const satisfies readonly ServiceCode[];

function authorizeError(code: ServiceCode, times?: number): AuthorizeError {
  // Authorize refusals are 401 when the table allows it (INVALID_LOGIN, TOO_MANY_REQUESTS), else the table's status.
  const statuses: readonly number[] = SERVICE_CODES[code].httpStatus;
  const httpStatus = statuses.includes(401) ? 401 : (statuses[0] ?? 400);
  return times === undefined ? { code, httpStatus } : { code, httpStatus, times };
}

/** The variations of issue 60: the same data written differently, an unlisted challenge type, slow replies. */
function variantScenarios(): Scenario[] {
  const common = { institution: 'SandboxBank', kind: 'variation' } as const;
  const variant = (username: string, variations: readonly Variation[], what: string, data?: DataBehaviour) =>
    scenario({
      ...common,
      username,
      variations,
      description: `No MFA; every answer of its sessions ${what} (variations: ${variations.join(', ')}). Data pending for ${data?.pendingPolls ?? 1} poll(s).`,
      ...(data ? { data } : {}),
    });
  return [
    variant(
      'variant_nulls',
      ['nulls'],
      'has nulls in descriptive fields: some transactions without Description or Code, Chequing accounts without Category, holders without Email and PhoneNumber, Login Type null',
    ),
    variant(
      'variant_extra_members',
      ['extra-members'],
      'carries members the spec does not list: in accounts, transactions, holders, the envelope, and in attributes answers a top-level "Tag": "abc" beside the groups',
    ),
    variant('variant_slash_dates', ['slash-dates'], 'writes transaction dates YYYY/MM/DD'),
    variant('variant_iso_datetimes', ['iso-datetimes'], 'writes dates as ISO timestamps with a time (2026-10-31T00:00:00)'),
    variant('variant_brand_code', ['brand-code'], 'writes the code of its 202 pending bodies as FlinksCode', { pendingPolls: 2 }),
    variant('variant_all', ['nulls', 'extra-members', 'slash-dates', 'brand-code'], 'combines nulls, extra members, slash dates and FlinksCode'),
    scenario({
      ...common,
      username: 'unknown_challenge',
      description: 'One round with a challenge type the spec does not name (SmsCode), answered by its prompt with free text (246810), then HTTP 200.',
      steps: [SMS_CODE],
    }),
    scenario({
      ...common,
      username: 'unknown_challenge_mixed',
      description:
        'One round of two challenges: a QuestionAndAnswer (Montreal) and a type the spec does not name (PlainQuestion, Maple Avenue), answered together by prompt, then HTTP 200.',
      steps: [PLAIN_QUESTION],
    }),
    scenario({
      ...common,
      username: 'slow_answer',
      description:
        'One security question (Montreal); every answer is processed and answered only after limits.slowReplyMs (default 75 s, longer than a 60 s client timeout), whether or not the caller still waits. slow_answer_<n>: only the first n answers (per tenant).',
      steps: [SECURITY_QUESTION],
      slowReply: { on: 'answer' },
    }),
    scenario({
      ...common,
      username: 'slow_authorize',
      description:
        'No MFA; every live Authorize with credentials is processed and answered only after limits.slowReplyMs (default 75 s), whether or not the caller still waits. slow_authorize_<n>: only the first n (per tenant).',
      slowReply: { on: 'authorize' },
    }),
  ];
}

export const SCENARIOS: readonly Scenario[] = [
  scenario({ username: 'no_mfa', institution: 'SandboxBank', kind: 'no-mfa', description: 'Credentials only: HTTP 200 at once; data pending for 1 poll.' }),
  scenario({
    username: 'security_question',
    institution: 'SandboxBank',
    kind: 'challenge',
    description: 'One security question, then HTTP 200.',
    steps: [SECURITY_QUESTION],
  }),
  scenario({
    username: 'triple_question',
    institution: 'SandboxTrust',
    kind: 'challenge',
    description: 'Triple question: three QuestionAndAnswer at once, answered in one call.',
    steps: [TRIPLE_QUESTION],
  }),
  scenario({
    username: 'image_selection',
    institution: 'SandboxPictureBank',
    kind: 'challenge',
    description: `Image selection: a security question, then ImageSelection among 16 PNG images (the correct one is the ${IMAGE_NAMES[CORRECT_IMAGE_INDEX] ?? ''}, index ${CORRECT_IMAGE_INDEX}).`,
    steps: [SECURITY_QUESTION, IMAGE_SELECTION],
  }),
  scenario({
    username: 'token_code',
    institution: 'SandboxTokenBank',
    kind: 'challenge',
    description: 'Token code (SecurID): a 6-digit code as QuestionAndAnswer, then a regular security question.',
    steps: [TOKEN_CODE, SECURITY_QUESTION],
  }),
  scenario({
    username: 'reset_questions',
    institution: 'SandboxCreditUnion',
    kind: 'challenge',
    description:
      'Reset security questions: MultipleChoice + MultipleChoiceMultipleAnswers together, then three QuestionAndAnswer with candidate questions, each answered [chosenQuestion, answer] (any listed question, any non-empty answer).',
    steps: [RESET_CHOICES, RESET_NEW_QUESTIONS],
  }),
  scenario({
    username: 'two_step_code',
    institution: 'SandboxMobileBank',
    kind: 'challenge',
    description:
      'Two-step code: TextOrCall keyed by the chosen phone (value ["Text"] or ["Call"]), then the code prompt (654321); a live refresh of the saved login asks both again, so it cannot be refreshed unattended.',
    steps: [TEXT_OR_CALL, TWO_STEP_CODE],
    endUserVerification: 'two-step',
  }),
  scenario({
    username: 'trusted_device',
    institution: 'SandboxDeviceBank',
    kind: 'challenge',
    description:
      'Trusted device: WaitUntilEUAccept answered ["VERIFIED"]; also what a live refresh of this saved login asks, so it cannot be refreshed unattended.',
    steps: [TRUSTED_DEVICE],
    endUserVerification: 'trusted-device',
  }),
  ...AUTHORIZE_ERROR_CODES.map((code) =>
    scenario({
      username: code.toLowerCase(),
      institution: 'SandboxBank',
      kind: 'authorize-error',
      description: `Every live Authorize answers ${code}. Username ${code.toLowerCase()}_<n> fails n times, then succeeds without MFA.`,
      authorizeError: authorizeError(code),
    }),
  ),
  scenario({
    username: 'retry_later_twice',
    institution: 'SandboxBank',
    kind: 'transient-error',
    description: 'RETRY_LATER on the first 2 live Authorize calls (per tenant), then HTTP 200 without MFA.',
    authorizeError: authorizeError('RETRY_LATER', 2),
  }),
  scenario({
    username: 'aggregation_error_once',
    institution: 'SandboxBank',
    kind: 'transient-error',
    description: 'AGGREGATION_ERROR (HTTP 500) on the first live Authorize (per tenant), then HTTP 200.',
    authorizeError: authorizeError('AGGREGATION_ERROR', 1),
  }),
  scenario({
    username: 'operation_pending',
    institution: 'SandboxBank',
    kind: 'data-behaviour',
    description: 'No MFA; every data operation answers 202 OPERATION_PENDING 3 times, then 200.',
    data: { pendingPolls: 3 },
  }),
  scenario({
    username: 'operation_dispatched',
    institution: 'SandboxBank',
    kind: 'data-behaviour',
    description: 'No MFA; the first answer of each data operation is 202 OPERATION_DISPATCHED, the next 202 OPERATION_PENDING, then 200.',
    data: { pendingPolls: 2, dispatchedFirst: true },
  }),
  scenario({
    username: 'loading',
    institution: 'SandboxBank',
    kind: 'data-behaviour',
    description: 'No MFA; the first 2 data requests of each session answer 400 SESSION_LOADING (loading_<n> for n).',
    data: { pendingPolls: 1, loadingRequests: 2 },
  }),
  scenario({
    username: 'flaky_503',
    institution: 'SandboxBank',
    kind: 'data-behaviour',
    description: 'No MFA; the first 2 data requests of each session answer HTTP 503 (state untouched), then normal.',
    data: { pendingPolls: 1, fault: { kind: 'status-503', times: 2 } },
  }),
  scenario({
    username: 'flaky_reset',
    institution: 'SandboxBank',
    kind: 'data-behaviour',
    description: 'No MFA; the first 2 data requests of each session have their connection destroyed, then normal.',
    data: { pendingPolls: 1, fault: { kind: 'reset', times: 2 } },
  }),
  scenario({
    username: 'rate_limited',
    institution: 'SandboxBank',
    kind: 'data-behaviour',
    description: 'No MFA; the first 2 data requests of each session answer 429 TOO_MANY_REQUESTS (Retry-After: 1), then normal.',
    data: { pendingPolls: 1, fault: { kind: 'rate-limit', times: 2 } },
  }),
  scenario({
    username: 'flaky_malformed',
    institution: 'SandboxBank',
    kind: 'data-behaviour',
    description: 'No MFA; the first data request of each session answers HTTP 200 with a truncated JSON body (state untouched), then normal.',
    data: { pendingPolls: 1, fault: { kind: 'malformed', times: 1 } },
  }),
  scenario({
    username: 'unusable_reply',
    institution: 'SandboxBank',
    kind: 'data-behaviour',
    description:
      "No MFA; every data request of each session answers HTTP 200 with an accounts-detail body the product cannot act on: an applicant's holder (name, email) and transactions, but no RequestId (state untouched). A connection fails UnexpectedResponse after its first data request.",
    data: { pendingPolls: 1, fault: { kind: 'unusable' } },
  }),
  ...variantScenarios(),
];

/**
 * Bounds of `large_<accounts>x<transactions>`. The total keeps one login's one-year answer near
 * 170 MB of JSON at most (about 168 bytes a transaction), generated in a few seconds at worst.
 */
export const LARGE_LOGIN_LIMITS = {
  accounts: { min: 1, max: 500 },
  transactionsPerAccount: { min: 1, max: 20_000 },
  totalTransactions: { max: 1_000_000 },
} as const;

const LARGE_PREFIX = 'large_';
const LARGE_FORMAT = 'large_<accounts>x<transactions> (e.g. large_100x5000)';

/** Username patterns with parameters (n from 0 to 1,000,000; large logins within LARGE_LOGIN_LIMITS). */
export const SCENARIO_PATTERNS = [
  {
    pattern: 'pending_polls_<n>',
    example: 'pending_polls_7',
    description:
      'No MFA; every data operation answers 202 n times, then 200; it also completes on its own once n × limits.pendingPollMs passed since it started, polled or not.',
  },
  {
    pattern: 'pending_ms_<n>',
    example: 'pending_ms_1500',
    description: 'No MFA; every data operation answers 202 until n ms passed since it started, then 200.',
  },
  { pattern: 'loading_<n>', example: 'loading_3', description: 'No MFA; the first n data requests of each session answer 400 SESSION_LOADING.' },
  {
    pattern: 'slow_answer_<n>',
    example: 'slow_answer_1',
    description:
      'One security question (Montreal); the first n answers (per tenant) are processed and answered only after limits.slowReplyMs, later ones at once.',
  },
  {
    pattern: 'slow_authorize_<n>',
    example: 'slow_authorize_1',
    description:
      'No MFA; the first n live Authorize calls with credentials (per tenant) are processed and answered only after limits.slowReplyMs, later ones at once.',
  },
  {
    pattern: '<error_code>_<n>',
    example: 'retry_later_2',
    description: 'The first n live Authorize calls (per tenant) answer that code (any code of the authorize-error scenarios), then HTTP 200 without MFA.',
  },
  {
    pattern: 'large_<accounts>x<transactions>',
    example: 'large_100x5000',
    description:
      'No MFA (SandboxBank, live or saved); a business login with exactly <accounts> accounts of exactly <transactions> transactions each, all dated within the 365 days ending at asOf (GetAccountsDetail with DaysOfTransactions Days365 returns them all), running balances consistent as for every login, deterministic per LoginId. Data pending for 1 poll. Sizes outside limits answer INVALID_USERNAME (Authorize) or INVALID_REQUEST (admin logins endpoint) naming the limit. large_100x5000 is about 80 MB of JSON, generated once per login in well under a second and then served from the cache.',
    limits: LARGE_LOGIN_LIMITS,
  },
] as const;

/** A username of a pattern family whose parameters are out of bounds; the message names the limit. */
export class ScenarioParameterError extends Error {
  override readonly name = 'ScenarioParameterError';
  constructor(
    readonly username: string,
    message: string,
  ) {
    super(message);
  }
}

/** The size a `large_...` username asks for; throws ScenarioParameterError when malformed or out of bounds. */
function largeLoginSize(username: string): LargeLoginSize {
  const match = /^large_(\d+)x(\d+)$/.exec(username);
  if (!match) throw new ScenarioParameterError(username, `Large login "${username}" is malformed: the pattern is ${LARGE_FORMAT}`);
  const [, accountsText = '', transactionsText = ''] = match;
  const accounts = Number(accountsText);
  const transactionsPerAccount = Number(transactionsText);
  const { accounts: a, transactionsPerAccount: t, totalTransactions: total } = LARGE_LOGIN_LIMITS;
  const refuse = (why: string) => new ScenarioParameterError(username, `Large login "${username}": ${why}`);
  if (accounts < a.min || accounts > a.max) throw refuse(`accounts must be from ${a.min} to ${a.max} (got ${accountsText})`);
  if (transactionsPerAccount < t.min || transactionsPerAccount > t.max)
    throw refuse(`transactions per account must be from ${t.min} to ${t.max.toLocaleString('en-US')} (got ${transactionsText})`);
  if (accounts * transactionsPerAccount > total.max) {
    throw refuse(
      `accounts x transactions must be at most ${total.max.toLocaleString('en-US')} in total (got ${(accounts * transactionsPerAccount).toLocaleString('en-US')})`,
    );
  }
  return { accounts, transactionsPerAccount };
}

const BY_USERNAME = new Map(SCENARIOS.map((entry) => [entry.username, entry]));
const MAX_PARAMETER = 1_000_000;

/**
 * The scenario a username selects (exact, case-sensitive), or undefined for an unknown user.
 * Throws ScenarioParameterError for a `large_` username that is malformed or out of bounds, so the
 * caller can say which limit, in its own error style.
 */
export function resolveScenario(username: string): Scenario | undefined {
  const fixed = BY_USERNAME.get(username);
  if (fixed) return fixed;
  if (username.startsWith(LARGE_PREFIX)) {
    const large = largeLoginSize(username);
    return scenario({
      username,
      institution: 'SandboxBank',
      kind: 'no-mfa',
      large,
      description: `No MFA; a business login with ${large.accounts} accounts of ${large.transactionsPerAccount} transactions each over the last 365 days.`,
    });
  }
  const match = /^([a-z_]+?)_(\d{1,7})$/.exec(username);
  if (!match) return undefined;
  const base = match[1] ?? '';
  const n = Number(match[2]);
  if (n > MAX_PARAMETER) return undefined;
  const common = { username, institution: 'SandboxBank' as const };
  switch (base) {
    case 'pending_polls':
      return scenario({ ...common, kind: 'data-behaviour', description: `No MFA; data operations pending for ${n} polls.`, data: { pendingPolls: n } });
    case 'pending_ms':
      return scenario({
        ...common,
        kind: 'data-behaviour',
        description: `No MFA; data operations pending for ${n} ms.`,
        data: { pendingPolls: 0, pendingMs: n },
      });
    case 'loading':
      return scenario({
        ...common,
        kind: 'data-behaviour',
        description: `No MFA; first ${n} data requests answer SESSION_LOADING.`,
        data: { pendingPolls: 1, loadingRequests: n },
      });
    case 'slow_answer':
      return scenario({
        ...common,
        kind: 'variation',
        description: `One security question; the first ${n} answers are answered after limits.slowReplyMs.`,
        steps: [SECURITY_QUESTION],
        slowReply: { on: 'answer', times: n },
      });
    case 'slow_authorize':
      return scenario({
        ...common,
        kind: 'variation',
        description: `No MFA; the first ${n} live Authorize calls are answered after limits.slowReplyMs.`,
        slowReply: { on: 'authorize', times: n },
      });
  }
  const code = base.toUpperCase();
  if ((AUTHORIZE_ERROR_CODES as readonly string[]).includes(code)) {
    return scenario({
      ...common,
      kind: 'transient-error',
      description: `${code} on the first ${n} live Authorize calls, then HTTP 200.`,
      authorizeError: authorizeError(code as ServiceCode, n),
    });
  }
  return undefined;
}

// --- the public listing ---------------------------------------------------------------------------

export interface ScenarioListing {
  readonly username: string;
  readonly password: string;
  readonly institution: InstitutionName;
  readonly kind: ScenarioKind;
  readonly description: string;
  /** Each round: the challenges the 203 carries and the exact SecurityResponses that answer it. */
  readonly challengeSequence: readonly { readonly challenges: readonly WireChallenge[]; readonly answer: SecurityResponses }[];
  readonly pending: { readonly polls: number; readonly ms: number | null };
  readonly outcome:
    | { readonly ok: true; readonly failuresFirst?: { readonly error: ServiceCode; readonly httpStatus: number; readonly times: number } }
    | { readonly error: ServiceCode; readonly httpStatus: number };
  readonly dataPhase: Omit<DataBehaviour, 'pendingPolls' | 'pendingMs'>;
  /** Whether a live refresh of the saved login opens without the end user (false: two-step or trusted device). */
  readonly unattendedRefresh: boolean;
  readonly endUserVerification: 'two-step' | 'trusted-device' | null;
  /** Representation variations of every answer (the listing's `variations` says what each changes). */
  readonly variations: readonly Variation[];
  /** Which Authorize calls wait limits.slowReplyMs before they are processed; times null: every one. */
  readonly slowReply: { readonly on: SlowReply['on']; readonly times: number | null } | null;
}

export function describeScenario(entry: Scenario): ScenarioListing {
  const { pendingPolls, pendingMs, ...dataPhase } = entry.data;
  const error = entry.authorizeError;
  return {
    username: entry.username,
    password: entry.password,
    institution: entry.institution,
    kind: entry.kind,
    description: entry.description,
    challengeSequence: entry.steps.map((step) => ({ challenges: step.map(publicChallenge), answer: correctResponses(step) })),
    pending: { polls: pendingPolls, ms: pendingMs ?? null },
    outcome:
      error === undefined
        ? { ok: true }
        : error.times === undefined
          ? { error: error.code, httpStatus: error.httpStatus }
          : { ok: true, failuresFirst: { error: error.code, httpStatus: error.httpStatus, times: error.times } },
    dataPhase,
    unattendedRefresh: entry.endUserVerification === undefined,
    endUserVerification: entry.endUserVerification ?? null,
    variations: entry.variations ?? [],
    slowReply: entry.slowReply ? { on: entry.slowReply.on, times: entry.slowReply.times ?? null } : null,
  };
}

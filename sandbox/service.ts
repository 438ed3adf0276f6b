/**
 * The /v3 operations of the aggregation service: Authorize and its challenge state machine, accounts
 * detail and summary, statements, investments, attributes and DeleteCard. Handlers validate with the
 * shared contract first (a rejected request leaves every session as it was), then act on the state.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  AccountsDetailRequest,
  AccountsSummaryRequest,
  AttributesRequest,
  AuthorizeRequest,
  InvestmentsRequest,
  StatementsRequest,
  authorizeModeOf,
  type AttributePackageOperation,
  type AuthorizeMode,
  type Link,
  type Login,
} from '../src/aggregator/schemas.js';
import {
  ATTRIBUTE_PACKAGES,
  computeAttributes,
  detailTransaction,
  isAttributeName,
  selectAttributeAccounts,
  type AccountSelection,
  type AttributeName,
} from './attributes.js';
import { recordAnswer } from './authorize-submissions.js';
import { checkResponses, publicChallenge } from './challenges.js';
import type { AccountsJson, DataCache } from './data-cache.js';
import { localTimestamp } from './dates.js';
import { scenarioFault, type FaultAction } from './faults.js';
import { SandboxError, parseWith, type Reply } from './http.js';
import type { SandboxOptions } from './options.js';
import { uuidFrom } from './random.js';
import { INSTITUTIONS, ScenarioParameterError, resolveScenario, type Scenario } from './scenarios.js';
import {
  advance,
  behaviourOf,
  isRunning,
  startOperation,
  supersedes,
  type LoginRecord,
  type Operation,
  type OperationKind,
  type SandboxState,
  type Session,
  type Tenant,
} from './state.js';
import { statementsFor } from './statements.js';
import { vary } from './variations.js';

/** Thrown when a scenario's data fault applies; the server performs the fault. */
export class FaultSignal extends Error {
  override readonly name = 'FaultSignal';
  constructor(readonly action: FaultAction) {
    super(`scenario fault ${action.kind}`);
  }
}

const link = (rel: string, href: string): Link => ({ rel, href, example: null });
const AUTHORIZED_LINKS: Link[] = [
  link('Authorization', '/Authorize'),
  link('AccountsDetail', '/GetAccountsDetail'),
  link('AccountsSummary', '/GetAccountsSummary'),
  link('Statements', '/GetStatements'),
  link('InvestmentsDetail', '/Investments'),
];
const AUTHORIZE_LINKS: Link[] = [link('Authorization', '/Authorize')];

export interface ServiceDeps {
  readonly state: SandboxState;
  readonly cache: DataCache;
  readonly options: SandboxOptions;
}

export class Service {
  private sessionsCreated = 0;

  constructor(private readonly deps: ServiceDeps) {}

  private get now(): number {
    return this.deps.options.now();
  }

  // --- Authorize --------------------------------------------------------------------------------

  /** A Promise only for a slow reply (scenario slowReply): the call is processed once the delay passed. */
  authorize(tenant: Tenant, body: unknown): Reply | Promise<Reply> {
    const request = parseWith(AuthorizeRequest, body, 'Authorize');
    const mode = authorizeModeOf(request);
    // Counted once validated, whatever the outcome: a refused answer still reached the service.
    if (mode === 'answer') recordAnswer(tenant.submissions, request.RequestId ?? '', request.SecurityResponses ?? {});
    else if (mode !== 'cached') tenant.submissions.credentials += 1;
    if (this.isSlow(tenant, request, mode)) {
      // Unref'd: a closed sandbox does not keep its process alive for a reply nobody can receive.
      return sleep(this.deps.options.slowReplyMs, undefined, { ref: false }).then(() => this.authorizeNow(tenant, request, mode));
    }
    return this.authorizeNow(tenant, request, mode);
  }

  /**
   * Whether this call waits for slowReplyMs before it is processed: an answer on a session of a
   * slow_answer login, or a live first call of a slow_authorize user; with `times`, the first n per tenant.
   */
  private isSlow(tenant: Tenant, request: AuthorizeRequest, mode: AuthorizeMode): boolean {
    const scenario =
      mode === 'answer' ? tenant.sessions.get(request.RequestId ?? '')?.login.scenario : mode === 'live' ? this.scenarioOf(request.Username ?? '') : undefined;
    const slow = scenario?.slowReply;
    if (!scenario || !slow || slow.on !== (mode === 'answer' ? 'answer' : 'authorize')) return false;
    if (slow.times === undefined) return true;
    // Kept with the tenant's attempt counters (reset with the tenant), under a key of their own.
    const key = `slow-${slow.on}:${scenario.username}`;
    const count = (tenant.attempts.get(key) ?? 0) + 1;
    tenant.attempts.set(key, count);
    return count <= slow.times;
  }

  private authorizeNow(tenant: Tenant, request: AuthorizeRequest, mode: AuthorizeMode): Reply {
    switch (mode) {
      case 'answer':
        // The schema requires both RequestId and SecurityResponses in answer mode.
        return this.answer(tenant, request.RequestId ?? '', request.SecurityResponses ?? {});
      case 'cached': {
        const login = this.savedLogin(tenant, request.LoginId ?? '');
        return this.authorized(this.startSession(tenant, login, 'cached', false));
      }
      case 'refresh': {
        const login = this.savedLogin(tenant, request.LoginId ?? '');
        this.institutionChecks(tenant, login.scenario);
        const session = this.startSession(tenant, login, 'refresh', true);
        // Only two-step and trusted-device logins need their end user again; the service answers
        // the others' security questions from the answers it saved.
        return login.scenario.endUserVerification ? this.begin(session) : this.complete(session);
      }
      case 'live': {
        const scenario = this.scenarioOf(request.Username ?? '');
        if (!scenario)
          throw new SandboxError('INVALID_USERNAME', `Unknown sandbox user "${request.Username ?? ''}" (GET /sandbox/scenarios lists them)`, {
            httpStatus: 401,
            links: AUTHORIZE_LINKS,
          });
        if (request.Institution !== scenario.institution) {
          throw new SandboxError(
            'INVALID_LOGIN',
            `User "${scenario.username}" is not known at institution "${request.Institution ?? ''}" (it banks at ${scenario.institution})`,
            { httpStatus: 401, links: AUTHORIZE_LINKS },
          );
        }
        if (request.Password !== scenario.password) throw new SandboxError('INVALID_PASSWORD', 'The password is incorrect', { links: AUTHORIZE_LINKS });
        this.institutionChecks(tenant, scenario);
        const login = this.deps.state.loginFor(tenant, scenario, this.now);
        return this.begin(this.startSession(tenant, login, 'live', request.Save === true));
      }
    }
  }

  /** The scenario of a live username; a pattern's out-of-bounds parameters answer INVALID_USERNAME naming the limit. */
  private scenarioOf(username: string): Scenario | undefined {
    try {
      return resolveScenario(username);
    } catch (error) {
      if (error instanceof ScenarioParameterError) throw new SandboxError('INVALID_USERNAME', error.message, { httpStatus: 401, links: AUTHORIZE_LINKS });
      throw error;
    }
  }

  /** The scenario's Authorize-time error, always or for the first n attempts of this tenant. */
  private institutionChecks(tenant: Tenant, scenario: Scenario): void {
    const error = scenario.authorizeError;
    if (!error) return;
    const attempts = (tenant.attempts.get(scenario.username) ?? 0) + 1;
    tenant.attempts.set(scenario.username, attempts);
    if (error.times === undefined || attempts <= error.times) {
      const suffix = error.times === undefined ? '' : ` (attempt ${attempts} of ${error.times} failing)`;
      throw new SandboxError(error.code, `The institution answered ${error.code}${suffix}`, { httpStatus: error.httpStatus, links: AUTHORIZE_LINKS });
    }
  }

  private savedLogin(tenant: Tenant, loginId: string): LoginRecord {
    const login = tenant.logins.get(loginId);
    if (!login?.saved)
      throw new SandboxError('INVALID_LOGIN', `LoginId ${loginId} is not a saved login of this customer`, { httpStatus: 401, links: AUTHORIZE_LINKS });
    return login;
  }

  private startSession(tenant: Tenant, login: LoginRecord, mode: Session['mode'], save: boolean): Session {
    if (++this.sessionsCreated % 512 === 0) this.deps.state.sweep(this.now, this.deps.options.sessionIdleMs);
    return this.deps.state.openSession(tenant, login, mode, save, this.now);
  }

  /** First answer of a live or refresh session: the first challenge round, or 200 without MFA. */
  private begin(session: Session): Reply {
    if (session.login.scenario.steps.length === 0) return this.complete(session);
    session.phase = 'challenge';
    session.stepIndex = 0;
    return this.challenge(session);
  }

  private challenge(session: Session): Reply {
    const step = session.login.scenario.steps[session.stepIndex] ?? [];
    return varied(session, {
      status: 203,
      body: {
        Links: AUTHORIZE_LINKS,
        HttpStatusCode: 203,
        Institution: session.login.scenario.institution,
        RequestId: session.requestId,
        SecurityChallenges: step.map(publicChallenge),
      },
    });
  }

  private answer(tenant: Tenant, requestId: string, responses: Record<string, string[]>): Reply {
    const session = this.lookup(tenant, requestId);
    if (session.phase !== 'challenge') {
      throw new SandboxError('SESSION_NONEXISTENT', `No challenge is pending for RequestId ${requestId}`, { requestId, links: AUTHORIZE_LINKS });
    }
    const step = session.login.scenario.steps[session.stepIndex] ?? [];
    const verdict = checkResponses(step, responses);
    // A refused answer leaves the round pending: the same challenges can be answered again.
    if (!verdict.ok) throw new SandboxError(verdict.code, verdict.message, { requestId, links: AUTHORIZE_LINKS });
    session.stepIndex += 1;
    if (session.stepIndex < session.login.scenario.steps.length) return this.challenge(session);
    return this.complete(session);
  }

  /** The session opens: a live or refresh success refreshes the login, Save keeps it. */
  private complete(session: Session): Reply {
    session.phase = 'open';
    session.openedAt = this.now;
    session.login.lastRefreshAt = this.now;
    if (session.save) session.login.saved = true;
    return this.authorized(session);
  }

  private authorized(session: Session): Reply {
    return varied(session, {
      status: 200,
      body: {
        Links: AUTHORIZED_LINKS,
        HttpStatusCode: 200,
        Login: loginOf(session.login, 'Personal'),
        Institution: session.login.scenario.institution,
        RequestId: session.requestId,
      },
    });
  }

  /** A session of this tenant that is not stale; refreshes its idle clock. */
  private lookup(tenant: Tenant, requestId: string): Session {
    const session = tenant.sessions.get(requestId);
    if (!session) throw new SandboxError('SESSION_NONEXISTENT', `RequestId ${requestId} is unknown or expired`, { requestId, links: AUTHORIZE_LINKS });
    if (this.now - session.lastSeenAt > this.deps.options.sessionIdleMs) {
      tenant.sessions.delete(requestId);
      throw new SandboxError('SESSION_NONEXISTENT', `RequestId ${requestId} expired after being idle`, { requestId, links: AUTHORIZE_LINKS });
    }
    session.lastSeenAt = this.now;
    return session;
  }

  /** An open session for a data request, after the processing limit, scenario faults and loading. */
  private dataSession(tenant: Tenant, requestId: string): Session {
    const session = this.lookup(tenant, requestId);
    if (session.phase !== 'open') {
      throw new SandboxError('INVALID_REQUEST', `RequestId ${requestId} still has a challenge to answer through Authorize`, {
        requestId,
        links: AUTHORIZE_LINKS,
      });
    }
    if (this.now - session.openedAt > this.deps.options.processingLimitMs) {
      throw new SandboxError('SESSION_EXPIRED', `RequestId ${requestId} passed the processing limit`, { requestId, links: AUTHORIZE_LINKS });
    }
    const behaviour = behaviourOf(session.login);
    const n = ++session.dataRequests;
    const faultTimes = behaviour.fault === undefined ? 0 : (behaviour.fault.times ?? Number.POSITIVE_INFINITY);
    if (behaviour.fault && n <= faultTimes) throw new FaultSignal(scenarioFault(behaviour.fault.kind));
    const loading =
      (behaviour.loadingRequests !== undefined && n <= faultTimes + behaviour.loadingRequests) || this.now - session.openedAt < this.deps.options.loadingMs;
    if (loading) throw new SandboxError('SESSION_LOADING', 'The session is still loading; retry shortly', { requestId });
    return session;
  }

  /** Counts one answer of an operation; a pending reply when not ready, undefined when ready. */
  private pendingOrReady(session: Session, kind: OperationKind, links: Link[]): Reply | undefined {
    let operation = session.operations.get(kind);
    if (!operation) {
      operation = startOperation(this.now);
      session.operations.set(kind, operation);
    }
    const status = advance(operation, behaviourOf(session.login), this.now, this.deps.options.pendingPollMs);
    if (status === 'ready') return undefined;
    return varied(session, {
      status: 202,
      body: {
        ServiceCode: status,
        Links: links,
        HttpStatusCode: 202,
        Message:
          status === 'OPERATION_DISPATCHED'
            ? 'The operation was dispatched to the background; poll for the result'
            : 'Your request is still processing; poll again',
        RequestId: session.requestId,
      },
    });
  }

  // --- accounts ---------------------------------------------------------------------------------

  getAccountsDetail(tenant: Tenant, body: unknown): Reply {
    const { RequestId, ...options } = parseWith(AccountsDetailRequest, body, 'GetAccountsDetail');
    const session = this.dataSession(tenant, RequestId);
    const existing = session.operations.get('accounts');
    if (existing) existing.options = options;
    else session.operations.set('accounts', startOperation(this.now, options));
    return this.accountsDetailAnswer(session);
  }

  getAccountsDetailAsync(tenant: Tenant, requestId: string): Reply {
    const session = this.dataSession(tenant, requestId);
    if (!session.operations.has('accounts')) {
      throw new SandboxError('INVALID_REQUEST', `No GetAccountsDetail was requested with RequestId ${requestId}; call GetAccountsDetail first`, { requestId });
    }
    return this.accountsDetailAnswer(session);
  }

  private accountsDetailAnswer(session: Session): Reply {
    const pending = this.pendingOrReady(session, 'accounts', [link('AccountsDetailAsync', `/GetAccountsDetailAsync/${session.requestId}`)]);
    if (pending) return pending;
    const accounts = this.deps.cache.accountsJson(session.login, session.operations.get('accounts')?.options ?? {});
    return this.bankingEnvelope(session, accounts);
  }

  /** The cached Accounts bytes sent as they are between the envelope's two ends (never copied into a string). */
  private bankingEnvelope(session: Session, accountsJson: AccountsJson): Reply {
    return varied(session, {
      status: 200,
      chunks: [
        '{"HttpStatusCode":200,"Accounts":',
        ...accountsJson,
        `,"Login":${JSON.stringify(loginOf(session.login, 'Personal'))},"Institution":${JSON.stringify(session.login.scenario.institution)},"RequestId":"${session.requestId}"}`,
      ],
    });
  }

  getAccountsSummary(tenant: Tenant, body: unknown): Reply {
    const request = parseWith(AccountsSummaryRequest, body, 'GetAccountsSummary');
    return this.accountsSummaryAnswer(this.dataSession(tenant, request.RequestId));
  }

  getAccountsSummaryAsync(tenant: Tenant, requestId: string): Reply {
    const session = this.dataSession(tenant, requestId);
    if (!session.operations.has('summary')) {
      throw new SandboxError('INVALID_REQUEST', `No GetAccountsSummary was requested with RequestId ${requestId}; call GetAccountsSummary first`, {
        requestId,
      });
    }
    return this.accountsSummaryAnswer(session);
  }

  private accountsSummaryAnswer(session: Session): Reply {
    const pending = this.pendingOrReady(session, 'summary', [link('AccountsSummaryAsync', `/GetAccountsSummaryAsync/${session.requestId}`)]);
    if (pending) return pending;
    return this.bankingEnvelope(session, this.deps.cache.accountsJson(session.login, { WithTransactions: false }));
  }

  getStatements(tenant: Tenant, body: unknown): Reply {
    const request = parseWith(StatementsRequest, body, 'GetStatements');
    const session = this.dataSession(tenant, request.RequestId);
    const bank = this.deps.cache.bank(session.login);
    return varied(session, {
      status: 200,
      body: {
        HttpStatusCode: 200,
        StatementsByAccount: bank.accounts.map((account) => ({
          AccountNumber: account.AccountNumber,
          Statements: statementsFor(account, this.deps.options.asOf, request.NumberOfStatements),
        })),
        Login: loginOf(session.login, 'Personal'),
        RequestId: session.requestId,
      },
    });
  }

  // --- investments ------------------------------------------------------------------------------

  investments(tenant: Tenant, body: unknown): Reply {
    const request = parseWith(InvestmentsRequest, body, 'Investments');
    const session = this.dataSession(tenant, request.RequestId);
    if (session.login.id !== request.LoginId) {
      throw new SandboxError('INVALID_LOGIN', `LoginId ${request.LoginId} is not the login of RequestId ${request.RequestId}`, {
        httpStatus: 401,
        requestId: request.RequestId,
      });
    }
    const pending = this.pendingOrReady(session, 'investments', [link('InvestmentsDetail', '/Investments')]);
    if (pending) return pending;
    const institution = { Id: INSTITUTIONS[session.login.scenario.institution], Name: session.login.scenario.institution };
    return varied(session, {
      status: 200,
      raw: `{${this.deps.cache.investmentsJson(session.login)},"HttpStatusCode":200,"Login":${JSON.stringify(loginOf(session.login, null))},"Institution":${JSON.stringify(institution)},"RequestId":"${session.requestId}"}`,
    });
  }

  // --- attributes -------------------------------------------------------------------------------

  attributesPackage(tenant: Tenant, loginId: string, requestId: string, operation: AttributePackageOperation): Reply {
    const { group, attributes } = ATTRIBUTE_PACKAGES[operation];
    return this.attributes(tenant, loginId, requestId, { [group]: attributes }, {}, []);
  }

  attributesCustom(tenant: Tenant, loginId: string, requestId: string, body: unknown): Reply {
    const request = parseWith(AttributesRequest, body, 'Attributes');
    const requested = Object.values(request.Attributes).flat();
    const detail = request.Options?.AttributesDetail ?? request.AttributesDetail ?? [];
    const unknown = [...new Set([...requested, ...detail].filter((name) => !isAttributeName(name)))];
    if (unknown.length > 0) throw new SandboxError('INVALID_REQUEST', `Attributes: unknown attribute names: ${unknown.join(', ')}`);
    const selection: AccountSelection = {
      categories: request.Filters?.AccountCategory,
      accountIds: request.Options?.AccountFilter ?? request.AccountFilter,
    };
    return this.attributes(tenant, loginId, requestId, request.Attributes as Record<string, AttributeName[]>, selection, detail as AttributeName[]);
  }

  private attributes(
    tenant: Tenant,
    loginId: string,
    requestId: string,
    groups: Record<string, readonly AttributeName[]>,
    selection: AccountSelection,
    detail: readonly AttributeName[],
  ): Reply {
    const session = this.dataSession(tenant, requestId);
    if (session.login.id !== loginId) {
      throw new SandboxError('INVALID_LOGIN', `LoginId ${loginId} is not the login of RequestId ${requestId}`, { httpStatus: 401, requestId });
    }
    if (session.mode !== 'cached') {
      throw new SandboxError('INVALID_REQUEST', 'Attributes need a RequestId from a cached Authorize (LoginId with MostRecentCached true)', { requestId });
    }
    const accounts = session.operations.get('accounts');
    if (!accounts)
      throw new SandboxError('INVALID_REQUEST', 'Retrieve accounts detail (GetAccountsDetail) with this RequestId before asking for attributes', { requestId });
    const links = [link('Attributes', `/insight/login/${loginId}/attributes/${requestId}`)];
    // While accounts detail for the card is still running anywhere, attributes are pending (FACTS.md).
    // The spec's precondition is accounts detail retrieved for this RequestId; another session's
    // accounts detail matters only while it is really processing. One abandoned for a later accounts
    // detail that was delivered (usually this session's own) processes nothing the attributes could
    // wait for: they are computed from the data already delivered. So, as for DeleteCard, it does
    // not count (see cardBusy).
    if (this.cardBusy(tenant, session.login, ['accounts'])) {
      return varied(session, {
        status: 202,
        body: {
          ServiceCode: 'OPERATION_PENDING',
          Links: links,
          HttpStatusCode: 202,
          Message: 'Accounts detail for this card is still processing',
          RequestId: requestId,
        },
      });
    }
    const pending = this.pendingOrReady(session, 'attributes', links);
    if (pending) return pending;

    const bank = this.deps.cache.bank(session.login);
    const selected = selectAttributeAccounts(bank.accounts, selection);
    const body: Record<string, unknown> = {};
    for (const [group, names] of Object.entries(groups)) {
      const results = computeAttributes(selected, this.deps.options.asOf, names);
      const member: Record<string, unknown> = { Id: uuidFrom(`${session.login.id}:attributes:${group}`) };
      for (const name of names) member[name] = results[name]?.value ?? null;
      const detailed = detail.filter((name) => names.includes(name));
      if (detailed.length > 0) {
        member.AttributesDetail = detailed.map((name) => ({ Attribute: name, Transactions: (results[name]?.contributing ?? []).map(detailTransaction) }));
      }
      body[group] = member;
    }
    body.Login = loginOf(session.login, 'Personal');
    body.RequestId = requestId;
    body.HttpStatusCode = 200;
    return varied(session, { status: 200, body });
  }

  /**
   * Whether a data operation of this login (of one of `kinds`, default all) is really still processing
   * in any session of the tenant: running on its own clock (`isRunning`, in a session not idled out)
   * and not superseded, i.e. not abandoned for a later operation of the same kind on the login, in
   * another session, that was delivered since (`supersedes`).
   */
  private cardBusy(tenant: Tenant, login: LoginRecord, kinds?: readonly OperationKind[]): boolean {
    const behaviour = behaviourOf(login);
    const sessions = [...tenant.sessions.values()].filter((session) => session.login === login);
    const delivered = new Map<OperationKind, Operation[]>();
    for (const session of sessions) {
      for (const [kind, operation] of session.operations) {
        if (operation.deliveredStep === undefined) continue;
        const ofKind = delivered.get(kind);
        if (ofKind) ofKind.push(operation);
        else delivered.set(kind, [operation]);
      }
    }
    for (const session of sessions) {
      if (this.now - session.lastSeenAt > this.deps.options.sessionIdleMs) continue;
      for (const [kind, operation] of session.operations) {
        if (kinds && !kinds.includes(kind)) continue;
        if (!isRunning(operation, behaviour, this.now, this.deps.options.pendingPollMs)) continue;
        if (!(delivered.get(kind) ?? []).some((later) => supersedes(later, operation))) return true;
      }
    }
    return false;
  }

  // --- DeleteCard -------------------------------------------------------------------------------

  deleteCard(tenant: Tenant, loginId: string): Reply {
    const login = this.savedLogin(tenant, loginId);
    if (this.cardBusy(tenant, login)) throw new SandboxError('CARD_IN_USE', `LoginId ${loginId} still has a data operation in progress`);
    tenant.logins.delete(loginId);
    for (const [id, session] of tenant.sessions) if (session.login === login) tenant.sessions.delete(id);
    this.deps.cache.drop(loginId);
    return { status: 200, body: { HttpStatusCode: 200, Message: 'The card and its saved data were deleted', LoginId: loginId } };
  }
}

/** One of a session's answers with its login's representation variations (variations.ts), if any. */
function varied(session: Session, reply: Reply): Reply {
  return vary(reply, session.login.scenario.variations ?? []);
}

function loginOf(login: LoginRecord, type: 'Personal' | null): Login {
  return { Username: login.username, IsScheduledRefresh: false, LastRefresh: localTimestamp(login.lastRefreshAt), Type: type, Id: login.id };
}

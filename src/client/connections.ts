/**
 * The lending pipeline's typed client for aggregation connections: start one by business key (or
 * start it and wait for its first step), read its state, answer its challenges, wait for its result,
 * cancel it, and list connections by status through Temporal visibility.
 *
 * Everything it returns is a plain object (types from `contract/connection-definitions.ts`, `./connection-summary.ts` or declared here);
 * everything it throws is a `ConnectionClientError` subclass from `./errors.js`.
 */
import {
  ApplicationFailure,
  Client,
  Connection,
  ServiceError,
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import type { WorkflowExecutionInfo, WorkflowHandle } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { z } from 'zod';
import { describeIssues } from '../aggregator/schemas.js';
import type { SecurityResponses } from '../aggregator/schemas.js';
import { checkAnswer, checkAnswerSize, describeProblems } from '../workflows/connection/challenges.js';
import { ConnectionInput } from '../contract/connection/connection-input.js';
import type { ConnectionInputArgs } from '../contract/connection/connection-input.js';
import {
  awaitFirstStepUpdate,
  CONNECTION_FAILURE_TYPES,
  CONNECTION_STATUSES,
  CONNECTION_WORKFLOW_TYPE,
  connectionStateQuery,
  RUNNING_CONNECTION_STATUSES,
  submitAnswerUpdate,
} from '../contract/connection/connection-definitions.js';
import type { AnswerOutcome, ConnectionResult, ConnectionState, ConnectionStatus, FirstStep } from '../contract/connection/connection-definitions.js';
import { ConnectionStatusKey, CustomerIdKey, InstitutionKey, LoginIdKey, connectionStartAttributes } from '../contract/search-attributes.js';
import { parseBusinessKey, parseWorkflowId } from './business-key.js';
import {
  CLAIM_REFUSALS,
  callbackDeliveryStateQuery,
  callbackWorkflowId,
  claimResultUpdate,
  sourceRunIdOfWebhookId,
  type CallbackDeliveryState,
  type ClaimedResult,
} from '../contract/callbacks/callback-definitions.js';
import { activityOfHistory, type ActivityEntry } from './connection-activity.js';
import { dataConverterFor } from '../codec/data-converter.js';
import { connectFailureReason } from '../temporal/connect-error.js';
import { temporalConnectionOptions } from '../temporal/connection.js';
import { listedExecutions } from '../temporal/visibility-rows.js';
import { renewApiKey, STDERR_API_KEY_FILE_LOG, type ApiKeyFileLog, type ApiKeyFileWatch } from '../temporal/api-key-file.js';
import { TemporalApiKeyFileError } from '../settings/temporal-api-key-file.js';
import { loadClientConfig } from '../settings/client.js';
import type { ClientConfig } from '../settings/client.js';
import { ConnectionTracingInterceptor } from '../tracing/client-tracing.js';
import { acquireTracing, type Tracing } from '../tracing/provider.js';
import {
  AnswerRejectedError,
  ConnectionAlreadyEndedError,
  ConnectionFailedError,
  ConnectionHeldError,
  ConnectionNotFoundError,
  InvalidConnectionInputError,
  ResultClaimRefusedError,
  ResultWaitFailedError,
  TemporalAccessDeniedError,
  TemporalUnavailableError,
} from './errors.js';
import type { ConnectionEndType, ResultClaimRefusal } from './errors.js';
import { clientErrorOf, endedByTemporal, endedHow } from './temporal-errors.js';
import { isTenantId, tenantOfWorkflowId } from '../contract/workflow-tenant.js';
import { retryTransient, TransientRetryExhaustedError, type TransientRetryOptions } from './transient-retry.js';
import { unreadableQueryError } from './unreadable-history.js';
import {
  connectionClassOf,
  DEFAULT_PRIORITY_KEYS,
  DEFAULT_PRIORITY_POLICY,
  priorityKeyProblem,
  startPriority,
  type PriorityPolicy,
} from '../contract/priority.js';
import {
  ADMISSION_ASK_AGAIN_MS,
  admissionWorkflowId,
  HELD_PRIORITY_MEMO,
  HELD_START_MEMO,
  needsAdmission,
} from '../contract/admission/admission-definitions.js';
import { AdmissionWaker } from '../admission/admission-waker.js';
import { WorkerDeployments } from './deployments.js';
import { FleetBudgetClient } from './budget.js';
import { budgetWaitOf, type BudgetWait } from './budget-wait.js';
import { publishedPause, tenantThrottleWorkflowId, type ThrottleMemo } from '../contract/throttle/tenant-throttle-definitions.js';
import type { FleetBudget } from '../budget/fleet-budget.js';
import type { ConnectionSummary } from './connection-summary.js';
import { LoginsClient } from './logins.js';
import { BooksClient, type BooksClientOptions } from './books.js';
import { RefreshSchedules } from './schedules.js';
import { TenantsClient } from './tenants.js';
import { ConnectionCountsClient } from './connection-counts.js';
import { quoteVisibilityValue } from './visibility.js';

export { quoteVisibilityValue } from './visibility.js';

/**
 * What happens when a key's earlier connection has ended:
 * - `'never'`: refused (ConnectionAlreadyEndedError) whatever the outcome;
 * - `'if-failed'` (default): refused if it completed; a failed, cancelled or timed-out one starts again;
 * - `'always'`: a new run starts under the same key.
 * A key whose connection is still running always gives that running connection.
 */
export type RerunPolicy = 'never' | 'if-failed' | 'always';

/**
 * `result(id, { enrol })`: once the connection completed, enrol the login it saved in its tenant's
 * book (`true`: the default cadence, the connection's products and timing).
 */
export type EnrolOnResult = true | Parameters<BooksClient['enrolFromConnection']>[1];

export interface StartOptions {
  readonly rerun?: RerunPolicy;
  /**
   * Task Queue priority key, 1 (first) to 5 (last), in place of the one its class gets from config
   * (PRIORITY_LIVE, PRIORITY_PIPELINE, PRIORITY_SCHEDULED): live end users 1, pipelines 2, unattended 3.
   */
  readonly priority?: number;
}

/** Identifies one connection: the workflow id is the business key. */
export interface ConnectionRef {
  readonly workflowId: string;
}

export type FirstStepResult = ConnectionRef & FirstStep;

export interface AnswerInput {
  /** The challenge set being answered; defaults to the one the connection presents now. */
  readonly challengeSetId?: string | undefined;
  /** Prompt text (exactly as asked; for TextOrCall, the chosen option) → answers. */
  readonly responses: SecurityResponses;
}

export interface AnswerOptions {
  /** Check the answer against the challenges before sending it (default true). */
  readonly checkLocally?: boolean;
}

export const ListFilter = z.strictObject({
  status: z.enum(CONNECTION_STATUSES).optional(),
  customerId: z.string().min(1).max(200).optional(),
  institution: z.string().min(1).max(200).optional(),
  loginId: z.string().min(1).max(200).optional(),
  /** At most this many, newest first (default 100, at most 1000). */
  limit: z.number().int().min(1).max(1000).optional(),
});
export type ListFilter = z.input<typeof ListFilter>;

export interface ConnectionsClientOptions {
  /** A connected @temporalio/client Client (its namespace is used). */
  readonly client: Client;
  readonly taskQueue: string;
  /** For messages only. */
  readonly address?: string | undefined;
  /** The worker deployment whose versions `deployments` reads and routes (default aggregation-connections). */
  readonly deploymentName?: string | undefined;
  /** Priority keys by who waits and the tenants' fairness weights (default: src/contract/priority.ts). */
  readonly priority?: PriorityPolicy | undefined;
  /** The fleet's configured request budget (SERVICE_BUDGET_*), for `budget show`. */
  readonly budget?: FleetBudget | undefined;
  /** The window's bounds and page size of book refreshes that name none (BOOK_WINDOW_*, BOOK_PAGE_SIZE). */
  readonly books?: BooksClientOptions['defaults'];
  /** Where book refreshes run (UNATTENDED_POOL): the unattended pool's queue; default the task queue itself. */
  readonly unattendedTaskQueue?: string | undefined;
  /**
   * UNATTENDED_ADMISSION, as the workers have it: `window` holds an unattended start outside a book
   * on the server (a start delay) and wakes its tenant's admission, which finds it and begins it when
   * there is room; `off` (default) starts it at once.
   */
  readonly unattendedAdmission?: 'off' | 'window' | undefined;
}

/** How `ConnectionsClient.connect` reports on TEMPORAL_API_KEY_FILE's renewals. */
export interface ConnectOptions {
  /** Where a renewal, an unreadable token file and its recovery are said (never the token); default: a line on stderr. */
  readonly apiKeyFileLog?: ApiKeyFileLog;
}

const REUSE_POLICY = {
  never: 'REJECT_DUPLICATE',
  'if-failed': 'ALLOW_DUPLICATE_FAILED_ONLY',
  always: 'ALLOW_DUPLICATE',
} as const;

const FAILURE_TYPES: ReadonlySet<string> = new Set(CONNECTION_FAILURE_TYPES);
const TERMINAL_STATUSES: ReadonlySet<ConnectionStatus> = new Set(['Completed', 'Failed', 'Cancelled']);

export function isTerminalStatus(status: ConnectionStatus): boolean {
  return TERMINAL_STATUSES.has(status);
}

export class ConnectionsClient {
  readonly taskQueue: string;
  readonly namespace: string;
  /** Refresh schedules of saved logins: schedule, list, describe, pause/unpause, trigger, delete, latest refresh. */
  readonly schedules: RefreshSchedules;
  /** Forgetting saved logins (schedule, card, payloads, histories) and their retention timers. */
  readonly logins: LoginsClient;
  /** A tenant's book of saved logins, refreshed as one operation: enrol, schedule, run, progress, pause, report. */
  readonly books: BooksClient;
  /** The worker deployment's builds: which is current, which ramps, which still hold pinned connections. */
  readonly deployments: WorkerDeployments;
  /** The fleet's request budget on the task queue, and the tenants the service throttled. */
  readonly budget: FleetBudgetClient;
  /** A tenant's work as a whole: ended when its lender is forgotten. */
  readonly tenants: TenantsClient;
  /** Connections counted per tenant by status, and the tenants that have any (the console's counts). */
  readonly counts: ConnectionCountsClient;
  private readonly client: Client;
  private readonly options: ConnectionsClientOptions;
  private readonly address: string | undefined;
  private readonly priority: PriorityPolicy;
  private ownedConnection: Connection | undefined;
  private ownedTracing: Tracing | undefined;
  private ownedTokenRenewal: ApiKeyFileWatch | undefined;
  /** Wakes a tenant's admission after a held start, once a second at most (UNATTENDED_ADMISSION=window). */
  private readonly admissionWaker: AdmissionWaker;

  constructor(options: ConnectionsClientOptions) {
    this.options = options;
    this.client = options.client;
    this.taskQueue = options.taskQueue;
    this.namespace = options.client.options.namespace;
    this.address = options.address;
    this.priority = options.priority ?? DEFAULT_PRIORITY_POLICY;
    this.schedules = new RefreshSchedules({
      client: options.client,
      taskQueue: options.taskQueue,
      address: options.address,
      connections: this,
      priority: this.priority,
    });
    this.logins = new LoginsClient({ client: options.client, taskQueue: options.taskQueue, address: options.address, priority: this.priority });
    this.books = new BooksClient({
      client: options.client,
      taskQueue: options.taskQueue,
      unattendedTaskQueue: options.unattendedTaskQueue,
      address: options.address,
      priority: this.priority,
      schedules: this.schedules,
      defaults: options.books,
    });
    this.deployments = new WorkerDeployments(options.client, options.deploymentName ?? 'aggregation-connections');
    this.budget = new FleetBudgetClient(options.client, options.taskQueue, options.budget);
    this.tenants = new TenantsClient(options.client);
    this.counts = new ConnectionCountsClient(options.client);
    this.admissionWaker = new AdmissionWaker({
      temporal: options.client,
      taskQueue: options.unattendedTaskQueue ?? options.taskQueue,
      priority: this.priority,
    });
  }

  /**
   * Connects to Temporal with a whole client config: by default the environment's (src/settings/client.ts).
   * Nothing is merged, so a config without `encryption` connects without it.
   */
  static async connect(
    config: ClientConfig = loadClientConfig(),
    { apiKeyFileLog = STDERR_API_KEY_FILE_LOG }: ConnectOptions = {},
  ): Promise<ConnectionsClient> {
    const { address, namespace, taskQueue } = config.temporal;
    let connection: Connection;
    let openedWith: string | undefined;
    try {
      const options = await temporalConnectionOptions(config.temporal);
      openedWith = options.apiKey;
      connection = await Connection.connect(options);
    } catch (error) {
      if (error instanceof TemporalApiKeyFileError)
        throw new TemporalUnavailableError(address, `cannot connect to Temporal at ${address}: ${error.message}`, { cause: error });
      throw (
        TemporalAccessDeniedError.of(address, error) ??
        new TemporalUnavailableError(address, `cannot reach Temporal at ${address}: ${await connectFailureReason(config.temporal, error)}`, { cause: error })
      );
    }
    // With tracing configured, a connection's trace starts at its start call here.
    let tracing: Tracing | undefined;
    try {
      tracing = config.tracing ? await acquireTracing(config.tracing) : undefined;
    } catch (error) {
      await connection.close();
      throw error;
    }
    const interceptors = tracing ? { workflow: [new ConnectionTracingInterceptor(connection.workflowService, namespace)] } : undefined;
    const client = new Client({
      connection,
      namespace,
      dataConverter: dataConverterFor(config),
      interceptors,
      ...(config.identity === undefined ? {} : { identity: config.identity }),
    });
    const connections = new ConnectionsClient({
      client,
      taskQueue,
      address,
      deploymentName: config.deployment.name,
      priority: config.priority,
      budget: config.budget,
      books: config.books,
      unattendedTaskQueue: config.pools.unattendedTaskQueue,
      unattendedAdmission: config.pools.admission,
    });
    connections.ownedConnection = connection;
    connections.ownedTracing = tracing;
    // TEMPORAL_API_KEY_FILE: a renewed token reaches this connection (and every client actingAs shares it) until close.
    connections.ownedTokenRenewal = renewApiKey(config.temporal.transport, [connection], apiKeyFileLog, openedWith);
    return connections;
  }

  /** Closes the Temporal connection if this client opened it (see `connect`), and exports its last spans. */
  async close(): Promise<void> {
    const tracing = this.ownedTracing;
    this.ownedTracing = undefined;
    this.ownedTokenRenewal?.stop();
    this.ownedTokenRenewal = undefined;
    try {
      await this.ownedConnection?.close();
      this.ownedConnection = undefined;
    } finally {
      await tracing?.release();
    }
  }

  /**
   * Starts the connection for a business key, or finds the one already running under that key.
   * Returns once Temporal recorded the start (the workflow runs on without the caller), with the run's id.
   */
  async start(key: string, input: ConnectionInputArgs, options: StartOptions = {}): Promise<ConnectionRef & { readonly runId: string }> {
    const { workflowId, args, startOptions } = this.prepareStart(key, input, options);
    const held = this.options.unattendedAdmission === 'window' && needsAdmission(args, workflowId);
    try {
      const priorityKey = startOptions.priority.priorityKey ?? DEFAULT_PRIORITY_KEYS.scheduled;
      const handle = await this.client.workflow.start(CONNECTION_WORKFLOW_TYPE, {
        ...startOptions,
        // Held, it is unattended work: on the unattended pool when there is one (UNATTENDED_POOL=separate), as a book's connections are; its calls to the service still go to the service queue.
        ...(held ? { taskQueue: this.options.unattendedTaskQueue ?? this.taskQueue } : {}),
        workflowId,
        args: [args],
        // Held: no worker runs it until its admission finds it and its grant begins it; past the delay it begins and asks for itself.
        ...(held
          ? { startDelay: args.timing.admissionAskAgainMs ?? ADMISSION_ASK_AGAIN_MS, memo: { [HELD_START_MEMO]: true, [HELD_PRIORITY_MEMO]: priorityKey } }
          : {}),
      });
      // The run started, or the one found running under the key (USE_EXISTING).
      const runId = handle.firstExecutionRunId;
      // The admission finds the start in visibility; the wake makes sure one runs and looks now. Past a
      // blip: a start whose wake never lands is found by a woken admission, or begins at its delay and asks.
      if (held) await retryTransient(() => this.admissionWaker.wake(args.customerId));
      return { workflowId, runId };
    } catch (error) {
      throw this.mapError(workflowId, error);
    }
  }

  /**
   * Starts (or finds) the connection and waits, in the same call, for its first step: the first
   * challenge set to answer, an open session (no challenge), or its end (e.g. bad credentials).
   */
  async startAndAwaitFirstStep(key: string, input: ConnectionInputArgs, options: StartOptions = {}): Promise<FirstStepResult> {
    const { workflowId, args, startOptions } = this.prepareStart(key, input, options);
    const startWorkflowOperation = new WithStartWorkflowOperation(CONNECTION_WORKFLOW_TYPE, { ...startOptions, workflowId, args: [args] });
    try {
      const step = await this.client.workflow.executeUpdateWithStart(awaitFirstStepUpdate, { startWorkflowOperation });
      return { workflowId, ...step };
    } catch (error) {
      throw this.mapError(workflowId, error);
    }
  }

  /** The connection's whole state (status, challenge set, pending operation, polls, last rejection). */
  /**
   * This client, its requests sent under `identity` (`console:Alice Operator <sub>`): Temporal records
   * it with each start, answer, signal and cancel in the connection's history, which is how a
   * connection's activity names who acted. Same connection, converter and settings; closing it closes
   * nothing (the connection stays this client's).
   */
  actingAs(identity: string): ConnectionsClient {
    const { connection, namespace, dataConverter, interceptors } = this.client.options;
    return new ConnectionsClient({
      ...this.options,
      client: new Client({ connection, namespace, dataConverter, interceptors, identity: identity.slice(0, 255) }),
    });
  }

  /** Who did what to a connection (its start, answers, signals, cancel, termination), with when and the outcome, from its history. */
  async activity(workflowId: string): Promise<ActivityEntry[]> {
    const handle = this.handle(workflowId);
    try {
      const history = await handle.fetchHistory();
      return await activityOfHistory(history.events ?? [], this.client.options.loadedDataConverter, { namespace: this.client.options.namespace, workflowId });
    } catch (error) {
      // fetchHistory of an unknown id: the service's NOT_FOUND.
      if (error instanceof ServiceError && /not found/i.test(error.message)) throw new ConnectionNotFoundError(workflowId, { cause: error });
      throw this.mapError(workflowId, error);
    }
  }

  async getState(workflowId: string): Promise<ConnectionState> {
    const handle = this.handle(workflowId);
    try {
      return await handle.query(connectionStateQuery);
    } catch (error) {
      throw (await this.heldStartError(workflowId, error)) ?? (await unreadableQueryError(this.client, workflowId, error)) ?? this.mapError(workflowId, error);
    }
  }

  /**
   * Why a query failed when the reason is that the connection has not begun: started held (its memo
   * says so), still running, and no workflow task scheduled yet (its release or its delay schedules
   * the first). Temporal answers such a query with a bare "Failed to query Workflow".
   */
  private async heldStartError(workflowId: string, error: unknown): Promise<ConnectionHeldError | undefined> {
    const customerId = tenantOfWorkflowId(workflowId);
    if (customerId === undefined) return undefined;
    try {
      const described = await this.handle(workflowId).describe();
      if (described.memo?.[HELD_START_MEMO] !== true || described.status.name !== 'RUNNING') return undefined;
      const page = await this.client.workflowService.getWorkflowExecutionHistory({
        namespace: this.namespace,
        execution: { workflowId, runId: described.runId },
        maximumPageSize: 5,
      });
      const begun = (page.history?.events ?? []).some((event) => event.workflowTaskScheduledEventAttributes);
      return begun ? undefined : new ConnectionHeldError(workflowId, admissionWorkflowId(customerId), { cause: error });
    } catch {
      // Nothing to add: the caller keeps the error it has.
      return undefined;
    }
  }

  /**
   * The delivery of the connection's completion callback (delivered, retrying or given up), once the
   * connection ended with one; undefined otherwise, or while the delivery cannot be read (it is
   * shown when it can: a connection's state never waits on it).
   */
  async callbackDelivery(state: ConnectionState): Promise<CallbackDeliveryState | undefined> {
    if (state.callback === undefined) return undefined;
    const handle = this.client.workflow.getHandle(state.callback.deliveryWorkflowId);
    try {
      // An ended delivery's final state is its result (its close event): a query would have a worker
      // replay its history, every time the console's page polls.
      // One that ended other than by itself (terminated by hand) has no final state: not shown.
      const { status } = await handle.describe();
      if (status.name === 'RUNNING') return await handle.query(callbackDeliveryStateQuery);
      return status.name === 'COMPLETED' ? ((await handle.result()) as CallbackDeliveryState) : undefined;
    } catch (error) {
      // Gone or unreachable: not shown.
      if (error instanceof WorkflowNotFoundError || error instanceof ServiceError) return undefined;
      throw error;
    }
  }

  /**
   * Answers the connection's current challenge set. A malformed answer is refused here (and again by
   * the workflow's validator) with an AnswerRejectedError naming the problem; an answer the service
   * refuses comes back as `{ outcome: 'rejected' }` with the same challenges presented again. When
   * whether the service took it is unknown (a worker died while it was there), it comes back as
   * `{ outcome: 'restarted' }` with the challenges of a new session.
   */
  async answer(workflowId: string, answer: AnswerInput, options: AnswerOptions = {}): Promise<AnswerOutcome> {
    const handle = this.handle(workflowId);
    let challengeSetId = answer.challengeSetId;
    // Size is checked even when the caller checked the answer itself: an oversized answer must never
    // reach Temporal (past its message limit it fails slowly and misleadingly).
    const tooLarge = checkAnswerSize(answer.responses);
    if (tooLarge.length > 0) throw new AnswerRejectedError(workflowId, 'client', describeProblems(tooLarge), challengeSetId);
    if (options.checkLocally ?? true) {
      const state = await this.getState(workflowId);
      const set = state.challengeSet;
      if (state.status !== 'AwaitingAnswer' || set === undefined) {
        throw new AnswerRejectedError(workflowId, 'client', `the connection is not awaiting an answer (status ${state.status})`, challengeSetId);
      }
      if (challengeSetId !== undefined && challengeSetId !== set.id) {
        throw new AnswerRejectedError(
          workflowId,
          'client',
          `challenge set ${challengeSetId} is no longer current (now ${set.id}); look at the new challenges and answer again`,
          challengeSetId,
        );
      }
      challengeSetId = set.id;
      const problems = checkAnswer(set.challenges, answer.responses);
      if (problems.length > 0) throw new AnswerRejectedError(workflowId, 'client', describeProblems(problems), challengeSetId);
    }
    if (challengeSetId === undefined) {
      challengeSetId = (await this.getState(workflowId)).challengeSet?.id ?? '';
    }
    try {
      return await handle.executeUpdate(submitAnswerUpdate, { args: [{ challengeSetId, responses: answer.responses, sentAs: 'submitAnswer' }] });
    } catch (error) {
      if (error instanceof WorkflowUpdateFailedError) {
        throw new AnswerRejectedError(workflowId, 'validator', error.cause?.message ?? error.message, challengeSetId, { cause: error });
      }
      throw this.mapError(workflowId, error);
    }
  }

  /**
   * Waits for the connection to end: its result, or a ConnectionFailedError with the failure type.
   * Transient refusals by Temporal (a server restart, rate limits, an expired long poll) are waited
   * out (see transient-retry.ts); only when they outlast `giveUpAfterMs` does the wait fail, with
   * ResultWaitFailedError — the connection itself goes on.
   */
  async result(workflowId: string, options: TransientRetryOptions & { readonly enrol?: EnrolOnResult } = {}): Promise<ConnectionResult> {
    const handle = this.handle(workflowId);
    let result: ConnectionResult;
    try {
      result = (await retryTransient(() => handle.result(), options)) as ConnectionResult;
    } catch (error) {
      if (error instanceof TransientRetryExhaustedError) throw new ResultWaitFailedError(workflowId, error.lastCode, error.attempts, { cause: error });
      throw this.mapError(workflowId, error);
    }
    // The login it saved joins its tenant's book (a refusal throws; the result stays readable by calling again).
    if (options.enrol) await this.books.enrolFromConnection(workflowId, options.enrol === true ? {} : options.enrol);
    return result;
  }

  /**
   * Claims, once, the result a completion callback sent by reference (the event's `resultRef`: its
   * token is the credential), then reads that run's result with this client's converter (the
   * product's codec). The claim is the delivery workflow's `claimResultUpdate`, whose validator refuses
   * a wrong token, a second claim and a late one before anything reaches history: those throw
   * ResultClaimRefusedError with the reason, as does a webhook id of no delivery of `customerId`.
   * Once the claim succeeded it is spent: if the result cannot be read or handed on afterwards, the
   * pipeline reads the connection's state (and its result) with its own credential instead.
   */
  async claimCallbackResult(
    customerId: string,
    webhookId: string,
    token: string,
    options: TransientRetryOptions = {},
  ): Promise<ClaimedResult & { readonly result: ConnectionResult }> {
    const runId = sourceRunIdOfWebhookId(webhookId);
    if (runId === undefined || !isTenantId(customerId)) throw new ResultClaimRefusedError(webhookId, 'unknown', 'no result reference has this address');
    const deliveryId = callbackWorkflowId(customerId, runId);
    let claimed: ClaimedResult;
    try {
      claimed = await this.client.workflow.getHandle(deliveryId).executeUpdate(claimResultUpdate, { args: [{ token }] });
    } catch (error) {
      if (error instanceof WorkflowUpdateFailedError) {
        const said = error.cause?.message ?? error.message;
        throw new ResultClaimRefusedError(webhookId, claimRefusalOf(error.cause), said, { cause: error });
      }
      if (error instanceof WorkflowNotFoundError || (error instanceof ServiceError && /not found|already completed/i.test(error.message))) {
        throw new ResultClaimRefusedError(webhookId, ...(await this.endedClaim(deliveryId)), { cause: error });
      }
      throw this.mapError(deliveryId, error);
    }
    // The delivery names the run it stands for: never another tenant's, nor another run.
    if (tenantOfWorkflowId(claimed.workflowId) !== customerId || claimed.runId !== runId) {
      throw new ResultClaimRefusedError(
        webhookId,
        'unknown',
        `the delivery named ${claimed.workflowId} (run ${claimed.runId}), not a run of ${customerId}'s ${runId}`,
      );
    }
    const handle = this.client.workflow.getHandle(claimed.workflowId, claimed.runId);
    try {
      const result = (await retryTransient(() => handle.result(), options)) as ConnectionResult;
      return { ...claimed, result };
    } catch (error) {
      if (error instanceof TransientRetryExhaustedError) throw new ResultWaitFailedError(claimed.workflowId, error.lastCode, error.attempts, { cause: error });
      throw this.mapError(claimed.workflowId, error);
    }
  }

  /**
   * Why a delivery takes no claim any more: it has ended (after its result was claimed, or once the
   * window passed: its final state says which), or there is none at this address.
   */
  private async endedClaim(deliveryId: string): Promise<[ResultClaimRefusal, string]> {
    const handle = this.client.workflow.getHandle(deliveryId);
    const status = await handle.describe().then(
      (info) => info.status.name,
      () => undefined,
    );
    if (status === undefined) return ['unknown', 'no result reference has this address'];
    const final = status === 'COMPLETED' ? await (handle.result() as Promise<CallbackDeliveryState>).catch(() => undefined) : undefined;
    const why = final?.resultClaim === 'claimed' ? CLAIM_REFUSALS.claimed : final?.resultClaim === 'none' ? CLAIM_REFUSALS.none : CLAIM_REFUSALS.expired;
    return [why.reason, why.message];
  }

  /** Asks the connection to stop; it ends as Cancelled (its `result` throws ConnectionFailedError type Cancelled). */
  async cancel(workflowId: string): Promise<void> {
    const handle = this.handle(workflowId);
    try {
      await handle.cancel();
    } catch (error) {
      throw this.mapError(workflowId, error);
    }
  }

  /** What visibility knows of one connection (works for ended connections without a worker). */
  async describe(workflowId: string): Promise<ConnectionSummary> {
    const handle = this.handle(workflowId);
    try {
      return summarize(await handle.describe());
    } catch (error) {
      throw this.mapError(workflowId, error);
    }
  }

  /**
   * What the connection waits for when a call to the service is held: the fleet's request budget,
   * or its tenant paused because the service said TOO_MANY_REQUESTS. Undefined when nothing is held.
   */
  async budgetWait(workflowId: string, customerId: string): Promise<BudgetWait | undefined> {
    try {
      const description = await this.handle(workflowId).describe();
      let pause: ThrottleMemo | undefined;
      try {
        const throttle = await this.client.workflow.getHandle(tenantThrottleWorkflowId(customerId)).describe();
        pause = publishedPause(throttle);
      } catch (error) {
        if (!(error instanceof WorkflowNotFoundError)) throw error;
      }
      return budgetWaitOf(description, Date.now(), pause);
    } catch (error) {
      throw this.mapError(workflowId, error);
    }
  }

  /** Connections matching the filter, newest first, e.g. `list({ status: 'AwaitingAnswer' })`. */
  async list(filter: ListFilter = {}): Promise<ConnectionSummary[]> {
    const parsed = ListFilter.safeParse(filter);
    if (!parsed.success) throw new InvalidConnectionInputError(`list filter: ${describeIssues(parsed.error)}`, { cause: parsed.error });
    const { limit = 100, ...conditions } = parsed.data;
    const out: ConnectionSummary[] = [];
    try {
      // Without memos: a listing needs none, and one this process cannot open must not fail it.
      for await (const info of listedExecutions(this.client, visibilityQuery(conditions), Math.min(limit, 100))) {
        out.push(summarize(info));
        if (out.length >= limit) break;
      }
    } catch (error) {
      throw this.mapError(undefined, error);
    }
    return out;
  }

  private handle(workflowId: string): WorkflowHandle {
    return this.client.workflow.getHandle(parseWorkflowId(workflowId));
  }

  private prepareStart(key: string, input: ConnectionInputArgs, options: StartOptions) {
    const parsed = ConnectionInput.safeParse(input);
    if (!parsed.success) throw new InvalidConnectionInputError(describeIssues(parsed.error), { cause: parsed.error });
    const args = parsed.data;
    const workflowId = parseBusinessKey(key, args.customerId);
    const rerun = options.rerun ?? 'if-failed';
    if (!(rerun in REUSE_POLICY)) throw new InvalidConnectionInputError(`rerun must be one of ${Object.keys(REUSE_POLICY).join(', ')}`);
    const priorityProblem = options.priority === undefined ? undefined : priorityKeyProblem(options.priority);
    if (priorityProblem) throw new InvalidConnectionInputError(priorityProblem);
    const pairs = connectionStartAttributes(args);
    return {
      workflowId,
      args,
      startOptions: {
        taskQueue: this.taskQueue,
        workflowIdConflictPolicy: 'USE_EXISTING' as const,
        workflowIdReusePolicy: REUSE_POLICY[rerun],
        typedSearchAttributes: new TypedSearchAttributes(pairs),
        // Who waits decides the order; the tenant is the fairness key (src/contract/priority.ts).
        priority: startPriority(this.priority, connectionClassOf(args), args.customerId, options.priority),
      },
    };
  }

  private mapError(workflowId: string | undefined, error: unknown): Error {
    return clientErrorOf(error, this.address, (known) => {
      if (workflowId === undefined) return undefined;
      if (known instanceof WorkflowNotFoundError) return new ConnectionNotFoundError(workflowId, { cause: known });
      if (known instanceof WorkflowExecutionAlreadyStartedError) return new ConnectionAlreadyEndedError(workflowId, { cause: known });
      if (known instanceof WorkflowFailedError) return connectionFailed(workflowId, known);
      return undefined;
    });
  }
}

/**
 * Why the delivery's validator refused a claim, by the failure type it threw (CLAIM_REFUSALS), or by
 * its message: a delivery still on a build from before the types threw plain errors with the same
 * messages, and deliveries live for days across deploys.
 */
function claimRefusalOf(failure: Error | undefined): ResultClaimRefusal {
  const type = failure instanceof ApplicationFailure ? failure.type : undefined;
  return Object.values(CLAIM_REFUSALS).find((refusal) => refusal.type === type || refusal.message === failure?.message)?.reason ?? 'wrong-token';
}

/** Maps a workflow failure to ConnectionFailedError, reading the type and the service code. */
function connectionFailed(workflowId: string, error: WorkflowFailedError): ConnectionFailedError {
  const cause = error.cause;
  const how = endedHow(cause);
  // A type the connection does not fail with (another workflow's, or none) reads as Unknown.
  const type: ConnectionEndType = how !== undefined && (FAILURE_TYPES.has(how) || endedByTemporal(cause)) ? (how as ConnectionEndType) : 'Unknown';
  const serviceCode = cause instanceof ApplicationFailure ? serviceCodeOf(cause.details) : undefined;
  return new ConnectionFailedError(workflowId, type, cause?.message ?? error.message, serviceCode, { cause: error });
}

/** The first `serviceCode` (or `ServiceCode`) found in an ApplicationFailure's details, or a bare code string. */
export function serviceCodeOf(details: readonly unknown[] | undefined | null): string | undefined {
  for (const detail of details ?? []) {
    if (typeof detail === 'string' && /^[A-Z][A-Z0-9_]+$/.test(detail)) return detail;
    if (typeof detail === 'object' && detail !== null) {
      const record = detail as Record<string, unknown>;
      const code = record.serviceCode ?? record.ServiceCode;
      if (typeof code === 'string' && code !== '') return code;
    }
  }
  return undefined;
}

/** `WorkflowType = "connectionWorkflow" AND ConnectionStatus = "AwaitingAnswer" AND CustomerId = "..." AND ExecutionStatus = "Running"`. */
export function visibilityQuery(filter: Omit<z.infer<typeof ListFilter>, 'limit'>): string {
  const clauses = [`WorkflowType = ${quoteVisibilityValue(CONNECTION_WORKFLOW_TYPE)}`];
  const fields = [
    [ConnectionStatusKey.name, filter.status],
    [CustomerIdKey.name, filter.customerId],
    [InstitutionKey.name, filter.institution],
    [LoginIdKey.name, filter.loginId],
  ] as const;
  for (const [name, value] of fields) if (value !== undefined) clauses.push(`${name} = ${quoteVisibilityValue(value)}`);
  // A connection terminated or timed out keeps the running status it last published: it is not waiting.
  if ((RUNNING_CONNECTION_STATUSES as readonly string[]).includes(filter.status ?? '')) clauses.push('ExecutionStatus = "Running"');
  return clauses.join(' AND ');
}

function summarize(
  info: Pick<WorkflowExecutionInfo, 'workflowId' | 'runId' | 'typedSearchAttributes' | 'status' | 'startTime' | 'closeTime' | 'parentExecution'>,
): ConnectionSummary {
  const attributes = info.typedSearchAttributes;
  const status = attributes.get(ConnectionStatusKey);
  return {
    workflowId: info.workflowId,
    runId: info.runId,
    status: status !== undefined && (CONNECTION_STATUSES as readonly string[]).includes(status) ? (status as ConnectionStatus) : undefined,
    executionStatus: info.status.name,
    customerId: attributes.get(CustomerIdKey),
    institution: attributes.get(InstitutionKey),
    loginId: attributes.get(LoginIdKey),
    startedAt: info.startTime.toISOString(),
    closedAt: info.closeTime?.toISOString(),
    ...(info.parentExecution?.workflowId ? { parentWorkflowId: info.parentExecution.workflowId } : {}),
  };
}

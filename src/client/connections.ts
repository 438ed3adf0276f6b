/**
 * The lending pipeline's typed client for aggregation connections: start one by business key (or
 * start it and wait for its first step), read its state, answer its challenges, wait for its result,
 * cancel it, and list connections by status through Temporal visibility.
 *
 * Everything it returns is a plain object (types from `contract/connection-definitions.ts`, `./connection-summary.ts` or declared here);
 * everything it throws is a `ConnectionClientError` subclass from `./errors.js`.
 */
import { Client, ServiceError, WithStartWorkflowOperation, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { Connection, WorkflowHandle } from '@temporalio/client';
import { parseOrRefuse } from '../validation/parse-or-refuse.js';
import type { ConnectionInputArgs } from '../contract/connection/connection-input.js';
import { awaitFirstStepUpdate, CONNECTION_WORKFLOW_TYPE, connectionStateQuery, submitAnswerUpdate } from '../contract/connection/connection-definitions.js';
import type { AnswerOutcome, ConnectionResult, ConnectionState, ConnectionStatus } from '../contract/connection/connection-definitions.js';
import { parseWorkflowId } from './business-key.js';
import type { CallbackDeliveryState, ClaimedResult } from '../contract/callbacks/callback-definitions.js';
import { activityOfHistory, type ActivityEntry } from './connection-activity.js';
import { listedExecutions } from '../temporal/visibility-rows.js';
import { renewApiKey, STDERR_API_KEY_FILE_LOG, type ApiKeyFileWatch } from '../temporal/api-key-file.js';
import { loadClientConfig } from '../settings/client.js';
import type { ClientConfig } from '../settings/client.js';
import type { Tracing } from '../tracing/provider.js';
import { AnswerRejectedError, ConnectionNotFoundError, InvalidConnectionInputError, ResultWaitFailedError } from './errors.js';
import { retryTransient, TransientRetryExhaustedError, type TransientRetryOptions } from './transient-retry.js';
import { unreadableQueryError } from './unreadable-history.js';
import { DEFAULT_PRIORITY_KEYS, DEFAULT_PRIORITY_POLICY, type PriorityPolicy } from '../contract/priority.js';
import { needsAdmission } from '../contract/admission/admission-definitions.js';
import { AdmissionWaker } from '../admission/admission-waker.js';
import { WorkerDeployments } from './deployments.js';
import { FleetBudgetClient } from './budget.js';
import { budgetWaitOf, type BudgetWait } from './budget-wait.js';
import { publishedPause, tenantThrottleWorkflowId, type ThrottleMemo } from '../contract/throttle/tenant-throttle-definitions.js';
import type { ConnectionSummary } from './connection-summary.js';
import { LoginsClient } from './logins.js';
import { BooksClient } from './books.js';
import { RefreshSchedules } from './schedules.js';
import { TenantsClient } from './tenants.js';
import { ConnectionCountsClient } from './connection-counts.js';
import { challengeSetToAnswer, type AnswerInput, type AnswerOptions } from './answer-check.js';
import { callbackDeliveryOf, claimCallbackResult } from './callback-delivery.js';
import { connectionErrorOf } from './connection-failure.js';
import { ListFilter, summarize, visibilityQuery } from './connection-listing.js';
import { prepareStart, type ConnectionRef, type FirstStepResult, type StartOptions } from './connection-start.js';
import { heldStartError, heldStartOptions } from './held-start.js';
import { openClient } from './open-client.js';
import type { ConnectionsClientOptions, ConnectOptions } from './connection-client-options.js';

/**
 * `result(id, { enrol })`: once the connection completed, enrol the login it saved in its tenant's
 * book (`true`: the default cadence, the connection's products and timing).
 */
export type EnrolOnResult = true | Parameters<BooksClient['enrolFromConnection']>[1];

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
    const { client, connection, tracing, openedWith } = await openClient(config);
    const { address, taskQueue } = config.temporal;
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
        ...(held ? heldStartOptions(args, priorityKey) : {}),
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

  /** The connection's whole state (status, challenge set, pending operation, polls, last rejection). */
  async getState(workflowId: string): Promise<ConnectionState> {
    const handle = this.handle(workflowId);
    try {
      return await handle.query(connectionStateQuery);
    } catch (error) {
      throw (
        (await heldStartError(this.client, workflowId, error)) ??
        (await unreadableQueryError(this.client, workflowId, error)) ??
        this.mapError(workflowId, error)
      );
    }
  }

  /**
   * The delivery of the connection's completion callback (delivered, retrying or given up), once the
   * connection ended with one; undefined otherwise, or while the delivery cannot be read (it is
   * shown when it can: a connection's state never waits on it).
   */
  async callbackDelivery(state: ConnectionState): Promise<CallbackDeliveryState | undefined> {
    return callbackDeliveryOf(this.client, state);
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
    const challengeSetId = await challengeSetToAnswer(workflowId, answer, options, (id) => this.getState(id));
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
    return claimCallbackResult(this.client, (id, error) => this.mapError(id, error), customerId, webhookId, token, options);
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
    const { limit = 100, ...conditions } = parseOrRefuse(
      ListFilter,
      filter,
      (problem, cause) => new InvalidConnectionInputError(`list filter: ${problem}`, { cause }),
    );
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
    return prepareStart(this.taskQueue, this.priority, key, input, options);
  }

  private mapError(workflowId: string | undefined, error: unknown): Error {
    return connectionErrorOf(this.address, workflowId, error);
  }
}

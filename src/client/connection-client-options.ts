/**
 * What a ConnectionsClient is made with: the Temporal client and queues it uses, the settings its
 * sub-clients take (priority, budget, books, admission), and how `connect` reports token renewals.
 * Apart from the client because they are its configuration, not its calls.
 */
import type { Client } from '@temporalio/client';
import type { FleetBudget } from '../budget/fleet-budget.js';
import type { PriorityPolicy } from '../contract/priority.js';
import type { ApiKeyFileLog } from '../temporal/api-key-file.js';
import type { BooksClientOptions } from './books.js';

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

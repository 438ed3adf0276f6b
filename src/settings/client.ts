/**
 * The pipeline client's and the CLI's settings: loadClientConfig
 *   { temporal, customerId, deployment, priority, budget, books, pools, encryption?, payloadStore, tracing? },
 * and the CLI's own password variable (connectionPasswordFromEnv).
 */
import { z } from 'zod';
import { CustomerId } from './aggregator.js';
import { DeploymentVars, deploymentSection } from './deployment.js';
import { doc, group } from './document.js';
import { parseEnv } from './load.js';
import { KeyProviderVars } from './kms.js';
import { EncryptionVars } from './encryption-keys.js';
import { PayloadStoreVars, checkPayloads, payloadSections } from './payload-store.js';
import { PoolVars, poolsSection } from './pools.js';
import { BookVars, BudgetVars, PriorityVars, bookSection, budgetSection, prioritySection } from './fleet-sharing.js';
import { TemporalEnvConfigVars } from './temporal-env-config.js';
import { TemporalVars, checkApiKey, checkTls, temporalSection, withTemporalEnvConfig } from './temporal.js';
import { TracingVars, tracingSection } from './tracing.js';

export const IdentityVars = group(
  z.object({
    TEMPORAL_CLIENT_IDENTITY: doc(
      z.string().trim().min(1).max(255).optional(),
      "The identity this client's requests carry into Temporal's histories, where a connection's activity names who started, answered or cancelled it (`activity`): e.g. pipeline:loan-origination. The console sends each signed-in operator's requests under their own.",
      { defaultText: "the SDK's <pid>@<host>" },
    ),
  }),
  'Client identity',
  'Who the pipeline client and the CLI are, in the histories they write to.',
);

/** What the pipeline client and the CLI need to reach the connections. */
export const ClientVariables = z.looseObject({
  ...TemporalVars.shape,
  ...IdentityVars.shape,
  ...TemporalEnvConfigVars.shape,
  AGGREGATOR_CUSTOMER_ID: CustomerId,
  ...DeploymentVars.shape,
  ...PriorityVars.shape,
  ...BudgetVars.shape,
  ...BookVars.shape,
  ...PoolVars.shape,
  ...EncryptionVars.shape,
  ...KeyProviderVars.shape,
  ...PayloadStoreVars.shape,
  ...TracingVars.shape,
});

const ClientEnv = ClientVariables.transform(withTemporalEnvConfig)
  .superRefine((env, ctx) => {
    checkTls(env, ctx);
    checkApiKey(env, ctx);
    checkPayloads(env, ctx);
  })
  .transform((env, ctx) =>
    Object.freeze({
      temporal: temporalSection(env),
      /** The identity this client's requests carry into Temporal's histories; undefined: the SDK's pid@host. */
      identity: env.TEMPORAL_CLIENT_IDENTITY,
      /** The tenant (lender) that new connections belong to unless told otherwise. */
      customerId: env.AGGREGATOR_CUSTOMER_ID,
      /** The worker deployment whose versions `deployment` commands show and route. */
      deployment: deploymentSection(env, env.TEMPORAL_TASK_QUEUE, ctx),
      /** The priority each connection starts with, by who waits, and the tenants' fairness weights. */
      priority: prioritySection(env),
      /** The fleet's configured request budget (what `budget show` compares with the queue's). */
      budget: budgetSection(env, ctx),
      /** The window and page size of book refreshes that name none. */
      books: bookSection(env, ctx),
      /** Where book refreshes start: the unattended pool's queue, or the service queue when it is shared. */
      pools: poolsSection(env, env.TEMPORAL_TASK_QUEUE),
      ...payloadSections(env, ctx),
      ...tracingSection(env, 'aggregation-connections-client'),
    }),
  );

export type ClientConfig = z.output<typeof ClientEnv>;

export const CliVars = group(
  z.object({
    CONNECTION_PASSWORD: doc(
      z.string().optional(),
      '`npm run cli -- start` reads a live password here when --password-stdin is not given (never from a flag).',
      { secret: true },
    ),
  }),
  'CLI',
  'The operator CLI (`npm run cli`) reaches Temporal with the client settings above; this is its own.',
);

export function loadClientConfig(env?: NodeJS.ProcessEnv): ClientConfig {
  return parseEnv(ClientEnv, env);
}

/** The CLI's `start` reads a live password from here when --password-stdin is not given (never from a flag). */
export function connectionPasswordFromEnv(env?: NodeJS.ProcessEnv): string | undefined {
  return parseEnv(CliVars, env).CONNECTION_PASSWORD;
}

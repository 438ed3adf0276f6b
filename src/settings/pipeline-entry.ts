/**
 * The pipeline entry's settings (`npm run pipeline-entry`, src/pipeline-entry/server.ts):
 * loadPipelineEntryConfig { host, port, keyFiles, callbackUrls, resultInBody, auditStore }; it reaches Temporal with
 * the client's settings (loadClientConfig), as the console does.
 */
import { z } from 'zod';
import { ID_SEGMENT_SOURCE } from '../contract/ids.js';
import { reservedTenantProblem } from '../contract/workflow-tenant.js';
import { AuditVars, auditStoreLocation } from './audit.js';
import { CallbackVars } from './callbacks.js';
import { NonEmpty, Port, doc, group } from './document.js';
import { parseEnv } from './load.js';
import { keyedList } from './keyed-list.js';

const PipelineEntryPort = doc(Port.default(8090), 'The pipeline entry listens on this port.');

const KEY_FILES_RULE = 'must be a comma-separated list of <customerId>=<file>, e.g. lender-a=/run/secrets/lender-a.pipeline-keys';

/** `lender-a=/run/secrets/a.keys,lender-b=/run/secrets/b.keys` → file by customer id. */
const PipelineKeyFiles = keyedList({
  keySource: ID_SEGMENT_SOURCE,
  valueSource: '\\S+',
  rule: KEY_FILES_RULE,
  twice: (customerId) => `${customerId} appears twice: list its keys (several during a rotation) in its one file`,
  keyProblem: reservedTenantProblem,
  read: (file) => file,
});

export const PipelineEntryVars = group(
  z.object({
    PIPELINE_ENTRY_HOST: doc(
      NonEmpty.default('127.0.0.1'),
      'The address the pipeline entry listens on: 127.0.0.1 unless it sits behind a TLS proxy (0.0.0.0 in a container).',
    ),
    PIPELINE_ENTRY_PORT: PipelineEntryPort,
    PIPELINE_KEY_FILES: doc(
      PipelineKeyFiles.optional(),
      "Each tenant's pipeline keys, as files of their SHA-256 hashes: comma-separated <customerId>=<file>, each file one lower-case hex SHA-256 a line (blank lines and `#` comments allowed; two during a rotation). The entry holds no key, only hashes; it reads a file again when it changes, so a key is added or revoked without a restart. `npm run cli -- pipeline-key create <customerId>` mints a key and prints the line to add. A key of no tenant is refused (401); the tenant of every request is its key's.",
      { defaultText: 'unset: the entry refuses to start (no pipeline could use it)' },
    ),
  }),
  'Pipeline entry',
  'A small HTTP entry (`npm run pipeline-entry`) for lending pipelines without Temporal: start a connection, read its state, cancel it, and claim a result a callback sent by reference, each with a tenant\'s own credential (docs/threat-model.md, "The pipeline entry"). It reaches Temporal with the client settings, and records every start, claim and refusal in the audit trail (AUDIT_STORE).',
);

export const PipelineEntryVariables = z.looseObject({
  ...PipelineEntryVars.shape,
  /** A start's callback URL is checked against its tenant's prefixes before anything starts. */
  CALLBACK_URLS: CallbackVars.shape.CALLBACK_URLS,
  /** A start asking for the result in the body is refused at once for a tenant not opted in. */
  CALLBACK_RESULT_IN_BODY: CallbackVars.shape.CALLBACK_RESULT_IN_BODY,
  ...AuditVars.shape,
});

const PipelineEntryEnv = PipelineEntryVariables.superRefine((env, ctx) => {
  if (env.PIPELINE_KEY_FILES === undefined || env.PIPELINE_KEY_FILES.size === 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['PIPELINE_KEY_FILES'],
      message: `is required: no tenant holds a key, so no pipeline could use the entry (${KEY_FILES_RULE})`,
    });
  }
}).transform((env) =>
  Object.freeze({
    host: env.PIPELINE_ENTRY_HOST,
    port: env.PIPELINE_ENTRY_PORT,
    /** The file of each tenant's key hashes. */
    keyFiles: env.PIPELINE_KEY_FILES ?? (new Map() as ReadonlyMap<string, string>),
    /** Each tenant's allowed callback URL prefixes (none: no callbacks). */
    callbackUrls: env.CALLBACK_URLS,
    /** The tenants whose callbacks may carry the result itself (`callback.includeResult`). */
    resultInBody: env.CALLBACK_RESULT_IN_BODY,
    /** Where the audit trail is kept: `file:<path>` or a postgres:// address. */
    auditStore: auditStoreLocation(env),
  }),
);

export type PipelineEntryConfig = z.output<typeof PipelineEntryEnv>;

export function loadPipelineEntryConfig(env?: NodeJS.ProcessEnv): PipelineEntryConfig {
  return parseEnv(PipelineEntryEnv, env);
}

/**
 * The Python package's names and defaults, read from the TypeScript modules that define them (never
 * retyped here) and rendered as python/src/aggregation_connections/contract/names.py, which
 * scripts/generate-python-models.ts writes beside the models and checks with them: the connection
 * workflow's type, messages, statuses, failure types and the other ways it ends, the search attributes it
 * carries, the `connections` Nexus service's name, operations and error types, the rule of the ids a business key is built from, the prefixes of the product's workflow ids, the priority keys and fairness weights, and every variable the
 * TypeScript client reads with the value it takes when unset. The Python modules import these instead of spelling them again.
 */
import type { SearchAttributeType } from '@temporalio/common';
import { z } from 'zod';
import { CONNECTION_FAILURE_TYPES } from '../../src/aggregator/failure-table.js';
import { CONNECTION_WORKFLOW_ID_PREFIX } from '../../src/client/business-key.js';
import { CONNECTION_END_TYPES } from '../../src/client/errors.js';
import {
  CONNECTION_STATUSES,
  CONNECTION_WORKFLOW_TYPE,
  RUNNING_CONNECTION_STATUSES,
  answerChallengeSignal,
  awaitFirstStepUpdate,
  connectionStateQuery,
  submitAnswerUpdate,
} from '../../src/contract/connection/connection-definitions.js';
import { CONNECTIONS_NEXUS_SERVICE_NAME, NEXUS_HANDLER_ERROR_TYPES, connectionsNexusService } from '../../src/contract/nexus-connections.js';
import { DEFAULT_PRIORITY_KEYS, FAIRNESS_WEIGHT_LIMITS, PRIORITY_CLASSES, PRIORITY_KEY_LIMITS } from '../../src/contract/priority.js';
import { ID_SEGMENT_MAX, ID_SEGMENT_RULE, ID_SEGMENT_SOURCE } from '../../src/contract/ids.js';
import { CONNECTION_SEARCH_ATTRIBUTES } from '../../src/contract/search-attributes.js';
import { THROTTLE_WORKFLOW_ID_KIND, WORKFLOW_ID_KINDS_WITH_COLON } from '../../src/contract/workflow-tenant.js';
import { HISTORY_PAYLOAD_LIMIT_BYTES } from '../../src/payload-store/settings.js';
import { ClientVariables } from '../../src/settings/client.js';
import { PAYLOAD_KEY_BYTES } from '../../src/settings/encryption-keys.js';
import { API_KEY_FILE_RECHECK_MIN_MS, TEMPORAL_DEFAULTS } from '../../src/settings/temporal.js';

export const NAMES_PATH = 'python/src/aggregation_connections/contract/names.py';

export class UnsupportedNameError extends Error {
  override readonly name = 'UnsupportedNameError';
  constructor(
    readonly what: string,
    problem: string,
  ) {
    super(`python-names: ${what}: ${problem}; extend scripts/lib/python-names.ts`);
  }
}

type Scalar = string | number | boolean;

/** A Python literal of a string, a finite number or a boolean. */
function literal(value: Scalar, what: string): string {
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number' && !Number.isFinite(value)) throw new UnsupportedNameError(what, `${value} has no Python literal`);
  // JSON's strings (with \uXXXX escapes) and numbers are Python's too.
  return JSON.stringify(value);
}

const isScalar = (value: unknown): value is Scalar =>
  typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));

/** A tuple on one line, or one item a line when that line would be long (as black writes it). */
function tuple(values: readonly Scalar[], what: string, indent = ''): string {
  const items = values.map((value) => literal(value, what));
  const line = `(${items.join(', ')}${items.length === 1 ? ',' : ''})`;
  return line.length <= 100 ? line : `(\n${items.map((item) => `${indent}    ${item},\n`).join('')}${indent})`;
}

/** ConnectionStatus → CONNECTION_STATUS. */
const upperSnake = (name: string): string => name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();

/** The factory of temporalio.common.SearchAttributeKey for each type. */
const KEY_FACTORY: Readonly<Record<SearchAttributeType, string>> = {
  TEXT: 'for_text',
  KEYWORD: 'for_keyword',
  INT: 'for_int',
  DOUBLE: 'for_float',
  BOOL: 'for_bool',
  DATETIME: 'for_datetime',
  KEYWORD_LIST: 'for_keyword_list',
};

function searchAttributeKey(key: { readonly name: string; readonly type: SearchAttributeType }): string {
  return `${upperSnake(key.name)}_KEY: Final = SearchAttributeKey.${KEY_FACTORY[key.type]}(${literal(key.name, key.name)})`;
}

/** The values a variable may take when its schema is a plain enum (PAYLOAD_STORE: auto, local, s3, off). */
export function clientVariableChoices(): Record<string, readonly string[]> {
  const choices: Record<string, readonly string[]> = {};
  for (const [name, schema] of Object.entries(ClientVariables.shape)) {
    let inner: z.ZodType = schema as z.ZodType;
    while (inner instanceof z.ZodDefault || inner instanceof z.ZodOptional) inner = inner.unwrap() as z.ZodType;
    if (inner instanceof z.ZodEnum) choices[name] = inner.options.map(String);
  }
  return choices;
}

/**
 * What each variable of the TypeScript client is when unset, as its schema parses it. A default no
 * literal can say (TENANT_WEIGHTS's empty map: every tenant 1) is left out, as is a variable without one.
 */
export function clientVariableDefaults(): Record<string, Scalar> {
  const defaults: Record<string, Scalar> = {};
  for (const [name, schema] of Object.entries(ClientVariables.shape)) {
    const parsed = (schema as z.ZodType).safeParse(undefined);
    if (parsed.success && isScalar(parsed.data)) defaults[name] = parsed.data;
  }
  // Optional in the schema (a temporal.toml profile may give them), these are the last resort.
  return { ...defaults, TEMPORAL_ADDRESS: TEMPORAL_DEFAULTS.address, TEMPORAL_NAMESPACE: TEMPORAL_DEFAULTS.namespace };
}

const HEADER = `# Generated by scripts/generate-python-models.ts (scripts/lib/python-names.ts) from the TypeScript
# modules named below: do not edit; run \`npm run python:models\` after changing one.
"""The names and defaults the worker and the TypeScript client define, for the Python side: each value
is read from its TypeScript module when this file is generated, and test/python/python-models.test.ts
fails when the committed file differs. The package's modules import them from here."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from temporalio.common import SearchAttributeKey`;

/** names.py as this checkout's TypeScript sources make it. */
export function pythonNamesSource(): string {
  const variables = Object.keys(ClientVariables.shape).sort();
  const defaults = clientVariableDefaults();
  const priorityKeys = PRIORITY_CLASSES.map((name) => `${literal(name, 'priority class')}: ${literal(DEFAULT_PRIORITY_KEYS[name], name)}`).join(', ');
  const sections = [
    HEADER,
    [
      '# The connection workflow (src/contract/connection/connection-definitions.ts).',
      `CONNECTION_WORKFLOW_TYPE: Final = ${literal(CONNECTION_WORKFLOW_TYPE, 'CONNECTION_WORKFLOW_TYPE')}`,
      `SUBMIT_ANSWER_UPDATE: Final = ${literal(submitAnswerUpdate.name, 'submitAnswerUpdate')}`,
      `AWAIT_FIRST_STEP_UPDATE: Final = ${literal(awaitFirstStepUpdate.name, 'awaitFirstStepUpdate')}`,
      `CONNECTION_STATE_QUERY: Final = ${literal(connectionStateQuery.name, 'connectionStateQuery')}`,
      `ANSWER_CHALLENGE_SIGNAL: Final = ${literal(answerChallengeSignal.name, 'answerChallengeSignal')}`,
      `CONNECTION_STATUSES: Final = ${tuple(CONNECTION_STATUSES, 'CONNECTION_STATUSES')}`,
      '#: The statuses of a running connection; one terminated or timed out keeps its last (so a query for them also asks ExecutionStatus).',
      `RUNNING_CONNECTION_STATUSES: Final = ${tuple(RUNNING_CONNECTION_STATUSES, 'RUNNING_CONNECTION_STATUSES')}`,
      '#: The failure types a connection ends with (src/aggregator/failure-table.ts).',
      `CONNECTION_FAILURE_TYPES: Final = ${tuple(CONNECTION_FAILURE_TYPES, 'CONNECTION_FAILURE_TYPES')}`,
      "#: How Temporal ended a connection that did not end with one of them (src/client/errors.ts, ConnectionEndType's other members).",
      `CONNECTION_END_TYPES: Final = ${tuple(CONNECTION_END_TYPES, 'CONNECTION_END_TYPES')}`,
    ].join('\n'),
    [
      "# The `connections` Nexus service (src/contract/nexus-connections.ts): its name, its operations' names and the",
      '# types of the handler errors a caller is refused with.',
      `CONNECTIONS_NEXUS_SERVICE_NAME: Final = ${literal(CONNECTIONS_NEXUS_SERVICE_NAME, 'CONNECTIONS_NEXUS_SERVICE_NAME')}`,
      `CONNECTIONS_NEXUS_OPERATIONS: Final = ${tuple(
        Object.values(connectionsNexusService.operations).map((operation) => operation.name),
        'connectionsNexusService.operations',
      )}`,
      `NEXUS_HANDLER_ERROR_TYPES: Final = ${tuple(NEXUS_HANDLER_ERROR_TYPES, 'NEXUS_HANDLER_ERROR_TYPES')}`,
    ].join('\n'),
    [
      '# The custom search attributes of connection workflows (src/contract/search-attributes.ts).',
      ...CONNECTION_SEARCH_ATTRIBUTES.map(searchAttributeKey),
    ].join('\n'),
    [
      '# An id segment, a customer or application id of a business key (src/contract/ids.ts); the source is a',
      '# regular expression JavaScript and Python read alike, unanchored (re.fullmatch it).',
      `ID_SEGMENT_MAX: Final = ${literal(ID_SEGMENT_MAX, 'ID_SEGMENT_MAX')}`,
      `ID_SEGMENT_SOURCE: Final = ${literal(ID_SEGMENT_SOURCE, 'ID_SEGMENT_SOURCE')}`,
      `ID_SEGMENT_RULE: Final = ${literal(ID_SEGMENT_RULE, 'ID_SEGMENT_RULE')}`,
    ].join('\n'),
    [
      '# Workflow ids: a connection\'s business key is this prefix + "<customerId>:<applicationId>"',
      "# (src/client/business-key.ts); a tenant's workflow ids are <kind><customerId>:<rest> for each kind, longest",
      '# first where one begins another, or the throttle kind + <customerId> (src/contract/workflow-tenant.ts).',
      `CONNECTION_WORKFLOW_ID_PREFIX: Final = ${literal(CONNECTION_WORKFLOW_ID_PREFIX, 'CONNECTION_WORKFLOW_ID_PREFIX')}`,
      `WORKFLOW_ID_KINDS_WITH_COLON: Final = ${tuple(WORKFLOW_ID_KINDS_WITH_COLON, 'WORKFLOW_ID_KINDS_WITH_COLON')}`,
      `THROTTLE_WORKFLOW_ID_KIND: Final = ${literal(THROTTLE_WORKFLOW_ID_KIND, 'THROTTLE_WORKFLOW_ID_KIND')}`,
    ].join('\n'),
    [
      '# Task queue priority (src/contract/priority.ts): a key per class of who waits, 1 served first, and the',
      "# bounds of a tenant's fairness weight.",
      `PRIORITY_CLASSES: Final = ${tuple(PRIORITY_CLASSES, 'PRIORITY_CLASSES')}`,
      `DEFAULT_PRIORITY_KEYS: Final[Mapping[str, int]] = MappingProxyType({${priorityKeys}})`,
      `PRIORITY_KEY_MIN: Final = ${literal(PRIORITY_KEY_LIMITS.min, 'PRIORITY_KEY_LIMITS.min')}`,
      `PRIORITY_KEY_MAX: Final = ${literal(PRIORITY_KEY_LIMITS.max, 'PRIORITY_KEY_LIMITS.max')}`,
      `FAIRNESS_WEIGHT_MIN: Final = ${literal(FAIRNESS_WEIGHT_LIMITS.min, 'FAIRNESS_WEIGHT_LIMITS.min')}`,
      `FAIRNESS_WEIGHT_MAX: Final = ${literal(FAIRNESS_WEIGHT_LIMITS.max, 'FAIRNESS_WEIGHT_LIMITS.max')}`,
    ].join('\n'),
    [
      "# TEMPORAL_API_KEY_FILE_RECHECK_MS's least value (src/settings/temporal.ts).",
      `TEMPORAL_API_KEY_FILE_RECHECK_MS_MIN: Final = ${literal(API_KEY_FILE_RECHECK_MIN_MS, 'API_KEY_FILE_RECHECK_MIN_MS')}`,
    ].join('\n'),
    [
      '#: AES-256: a payload key is exactly this many bytes (src/settings/encryption-keys.ts).',
      `PAYLOAD_KEY_BYTES: Final = ${literal(PAYLOAD_KEY_BYTES, 'PAYLOAD_KEY_BYTES')}`,
      '#: The most a payload left in history may weigh (src/payload-store/settings.ts).',
      `HISTORY_PAYLOAD_LIMIT_BYTES: Final = ${literal(HISTORY_PAYLOAD_LIMIT_BYTES, 'HISTORY_PAYLOAD_LIMIT_BYTES')}`,
    ].join('\n'),
    [
      '#: Every variable the TypeScript client reads (src/settings/client.ts, ClientVariables): the Python settings read no other.',
      'CLIENT_VARIABLES: Final = frozenset(',
      '    {',
      ...variables.map((name) => `        ${literal(name, name)},`),
      '    }',
      ')',
    ].join('\n'),
    [
      '# The values each of them whose schema is a plain enum may take.',
      ...Object.entries(clientVariableChoices())
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, values]) => `${name}_CHOICES: Final = ${tuple(values, name)}`),
    ].join('\n'),
    [
      '# What each of them is when unset, as the TypeScript client parses it (src/settings/); TEMPORAL_ADDRESS and',
      '# TEMPORAL_NAMESPACE where a temporal.toml profile gives none either. A variable without a default, or with',
      '# one no literal says (TENANT_WEIGHTS: every tenant 1), has none here.',
      ...Object.keys(defaults)
        .sort()
        .map((name) => `${name}_DEFAULT: Final = ${literal(defaults[name] as Scalar, name)}`),
    ].join('\n'),
  ];
  return `${sections.join('\n\n')}\n`;
}

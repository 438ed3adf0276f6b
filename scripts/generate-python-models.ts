/**
 * The Python package's contract, generated from the TypeScript sources so the two languages cannot
 * drift: each schema of MODELS goes through zod's JSON Schema export (z.toJSONSchema, the shape a
 * caller sends: io "input") into python/src/aggregation_connections/contract/schema.json, and from
 * there through a small generator into pydantic v2 models (models.py); the workflow's names, statuses,
 * failure types, search attributes and the client's variables with their defaults go into names.py
 * (scripts/lib/python-names.ts). test/python/python-models.test.ts fails when the committed files
 * differ from what this writes.
 *   npm run python:models            rewrite the three files
 *   tsx scripts/generate-python-models.ts --check   exit 1 naming the files that drifted
 * What JSON Schema cannot say (zod's refinements: "at least one product", "unattended needs a cached
 * session", trimming) stays the worker's to check; its message then reaches the Python caller as it
 * reaches a TypeScript one.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { AccountsDetailResponse, AttributesResponse, InvestmentsResponse, SecurityChallenge, SecurityResponses } from '../src/aggregator/schemas.js';
import { ConnectionInput } from '../src/contract/connection/connection-input.js';
import {
  AnswerOutcomeSchema,
  ChallengeSetSchema,
  ConnectionFailureInfoSchema,
  ConnectionResultSchema,
  ConnectionStateSchema,
  FirstStepSchema,
} from '../src/contract/connection/connection-schemas.js';
import { NexusAnswerInputSchema, NexusConnectionRefSchema, NexusRefreshBookInputSchema } from '../src/nexus/input-schemas.js';
import { NAMES_PATH, pythonNamesSource } from './lib/python-names.js';

export { NAMES_PATH } from './lib/python-names.js';

/**
 * The inputs of the `connections` Nexus service (src/contract/nexus-connections.ts) as a caller sends
 * them, from the handler's schemas (src/nexus/input-schemas.ts). `start`'s connection is the
 * connection's input with `customerId` optional (the endpoint's tenant): the handler checks it as
 * ConnectionInput once it has put the tenant in, so its fields are ConnectionInput's.
 */
const NexusConnectionInputSchema = z.strictObject({ ...ConnectionInput.shape, customerId: ConnectionInput.shape.customerId.optional() });
const NexusStartInputSchema = z.strictObject({ applicationId: NexusConnectionRefSchema.shape.applicationId, connection: NexusConnectionInputSchema });
/** `state`'s input is NexusConnectionRef (the contract's alias): a schema of its own, so it has its own name. */
const NexusStateInputSchema = z.strictObject(NexusConnectionRefSchema.shape);

/**
 * The models a pipeline needs: what it sends to start a connection and answer it, the products it
 * reads, and the connection's state, result, first step and answers' outcomes (which name the models
 * above them); then what a caller of the Nexus service sends.
 */
const MODELS: Readonly<Record<string, z.ZodType>> = {
  ConnectionInput,
  SecurityChallenge,
  SecurityResponses,
  AccountsDetailResponse,
  InvestmentsResponse,
  AttributesResponse,
  ChallengeSet: ChallengeSetSchema,
  ConnectionFailureInfo: ConnectionFailureInfoSchema,
  ConnectionState: ConnectionStateSchema,
  ConnectionResult: ConnectionResultSchema,
  FirstStep: FirstStepSchema,
  AnswerOutcome: AnswerOutcomeSchema,
  ChallengeAnswer: NexusAnswerInputSchema.shape.answer,
  NexusConnectionInput: NexusConnectionInputSchema,
  NexusStartInput: NexusStartInputSchema,
  NexusConnectionRef: NexusConnectionRefSchema,
  NexusStateInput: NexusStateInputSchema,
  NexusAnswerInput: NexusAnswerInputSchema,
  NexusRefreshBookInput: NexusRefreshBookInputSchema,
};

const root = fileURLToPath(new URL('..', import.meta.url));
const CONTRACT_DIR = 'python/src/aggregation_connections/contract';
export const SCHEMA_PATH = `${CONTRACT_DIR}/schema.json`;
export const MODELS_PATH = `${CONTRACT_DIR}/models.py`;

type JsonSchema = {
  /** Another model of MODELS, by name (zod's registry writes a schema it knows as a reference). */
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  propertyNames?: JsonSchema;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  format?: string;
  description?: string;
};

export class UnsupportedSchemaError extends Error {
  override readonly name = 'UnsupportedSchemaError';
  constructor(
    readonly where: string,
    problem: string,
  ) {
    super(`generate-python-models: ${where}: ${problem}; extend scripts/generate-python-models.ts`);
  }
}

/** The JSON Schema of every model, one document (its `schemas` by model name). */
export function contractSchema(): { schemas: Record<string, JsonSchema> } {
  const registry = z.registry<{ id: string }>();
  for (const [name, schema] of Object.entries(MODELS)) registry.add(schema, { id: name });
  // unrepresentable "any": a transform's output has no JSON Schema; io "input" describes what a caller sends.
  return z.toJSONSchema(registry, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }) as { schemas: Record<string, JsonSchema> };
}

const PYTHON_KEYWORDS = new Set([
  'False',
  'None',
  'True',
  'and',
  'as',
  'assert',
  'async',
  'await',
  'break',
  'class',
  'continue',
  'def',
  'del',
  'elif',
  'else',
  'except',
  'finally',
  'for',
  'from',
  'global',
  'if',
  'import',
  'in',
  'is',
  'lambda',
  'nonlocal',
  'not',
  'or',
  'pass',
  'raise',
  'return',
  'try',
  'while',
  'with',
  'yield',
]);

/** customerId → customer_id, WithKYC → with_kyc, HttpStatusCode → http_status_code. */
function snakeCase(name: string): string {
  const snake = name
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9_]/g, '_')
    .toLowerCase();
  const safe = /^[0-9]/.test(snake) ? `_${snake}` : snake;
  return PYTHON_KEYWORDS.has(safe) ? `${safe}_` : safe;
}

function pascalCase(name: string): string {
  return name.replace(/(^|[^A-Za-z0-9]+)([A-Za-z0-9])/g, (_, __, letter: string) => letter.toUpperCase()).replace(/[^A-Za-z0-9]/g, '');
}

const py = (value: unknown): string => {
  if (value === null) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  return JSON.stringify(value);
};

class PythonModels {
  private readonly classes: string[] = [];
  private readonly names = new Set<string>();
  private usesJson = false;
  private readonly bodies = new Map<string, string>();
  /** The Python name of each model of MODELS generated so far (a class, or an alias). */
  private readonly generated = new Map<string, string>();

  constructor(private readonly schemas: Record<string, JsonSchema>) {}

  source(): string {
    for (const [name, schema] of Object.entries(this.schemas)) {
      if (schema.type === 'object' && schema.properties) {
        const model = this.model(name, schema, name);
        // A model of the same shape as one before it (NexusStateInput, NexusConnectionRef) is that class, under its own name too.
        if (model !== name) this.classes.push(`${name} = ${model}`);
        this.generated.set(name, model);
      } else {
        // An alias (a dict, a union of the classes above it) right after the classes it names and before any
        // class that names it: pydantic builds a class when it is defined, so what it names must be there then.
        this.classes.push(`${name} = ${this.annotation(schema, name, name)}`);
        this.generated.set(name, name);
      }
    }
    const header = this.usesJson ? HEADER.replace('from typing', 'import json\nfrom typing') : HEADER;
    return [header, ...this.classes].join('\n\n\n');
  }

  private className(wanted: string): string {
    let name = wanted;
    for (let i = 2; this.names.has(name); i++) name = `${wanted}${i}`;
    this.names.add(name);
    return name;
  }

  /** A class for an object schema with properties; returns its name. */
  private model(wanted: string, schema: JsonSchema, where: string): string {
    const extra = schema.additionalProperties === false ? 'forbid' : 'allow';
    const required = new Set(schema.required ?? []);
    const lines = [`    model_config = ConfigDict(extra="${extra}", populate_by_name=True)`];
    for (const [property, propertySchema] of Object.entries(schema.properties ?? {})) {
      const field = snakeCase(property);
      const type = this.annotation(propertySchema, `${wanted}${pascalCase(property)}`, `${where}.${property}`);
      const options = [`alias=${py(property)}`];
      let annotation = type;
      if (propertySchema.default !== undefined) {
        const fallback = propertySchema.default;
        if (typeof fallback !== 'object' || fallback === null) options.push(`default=${py(fallback)}`);
        // An object default: the model made from its JSON (a model class), else the JSON itself.
        else if (/^[A-Za-z0-9]+$/.test(type)) options.push(`default_factory=lambda: ${type}.model_validate_json(${py(JSON.stringify(fallback))})`);
        else {
          this.usesJson = true;
          options.push(`default_factory=lambda: json.loads(${py(JSON.stringify(fallback))})`);
        }
      } else if (!required.has(property)) {
        annotation = type.split(' | ').includes('None') ? type : `${type} | None`;
        options.push('default=None');
      }
      lines.push(`    ${field}: ${annotation} = Field(${options.join(', ')})`);
    }
    // The same shape in several places (the Login of every product) is one class, named where it came first.
    const body = lines.join('\n');
    const same = this.bodies.get(body);
    if (same) return same;
    const name = this.className(wanted);
    this.bodies.set(body, name);
    this.classes.push(`class ${name}(ContractModel):\n${body}`);
    return name;
  }

  private annotation(schema: JsonSchema, wanted: string, where: string): string {
    if (schema.$ref !== undefined) {
      const target = this.generated.get(schema.$ref);
      if (!target) throw new UnsupportedSchemaError(where, `$ref ${JSON.stringify(schema.$ref)} names no model listed before it in MODELS`);
      return target;
    }
    const union = schema.oneOf ?? schema.anyOf;
    if (union) return this.union(union, wanted, where);
    if (schema.const !== undefined) return `Literal[${py(schema.const)}]`;
    if (schema.enum) return `Literal[${schema.enum.map(py).join(', ')}]`;
    if (Array.isArray(schema.type)) {
      return schema.type.map((type) => this.annotation({ ...schema, type }, wanted, where)).join(' | ');
    }
    switch (schema.type) {
      case 'string':
        return constrained('str', 'StringConstraints', { min_length: schema.minLength, max_length: schema.maxLength, pattern: schema.pattern });
      case 'integer':
      case 'number':
        return constrained(schema.type === 'integer' ? 'int' : 'float', 'Field', { ge: schema.minimum, le: schema.maximum });
      case 'boolean':
        return 'bool';
      case 'null':
        return 'None';
      case 'array':
        return constrained(`list[${schema.items ? this.annotation(schema.items, `${wanted}Item`, `${where}[]`) : 'Any'}]`, 'Field', {
          min_length: schema.minItems,
          max_length: schema.maxItems,
        });
      case 'object': {
        if (schema.properties) return this.model(wanted, schema, where);
        const key = schema.propertyNames ? this.annotation(schema.propertyNames, `${wanted}Key`, `${where}{key}`) : 'str';
        const value =
          typeof schema.additionalProperties === 'object' && Object.keys(schema.additionalProperties).length > 0
            ? this.annotation(schema.additionalProperties, `${wanted}Value`, `${where}{}`)
            : 'Any';
        return `dict[${key}, ${value}]`;
      }
      case undefined:
        // unrepresentable "any" (a transform) or an empty schema: anything.
        return 'Any';
      default:
        throw new UnsupportedSchemaError(where, `type ${JSON.stringify(schema.type)}`);
    }
  }

  private union(variants: JsonSchema[], wanted: string, where: string): string {
    const discriminator = discriminatorOf(variants);
    // A variant is named by its tag, else by its place among several (a lone one beside null by the field alone).
    const several = variants.filter((variant) => variant.type !== 'null').length > 1;
    const types = variants.map((variant, index) => {
      const tag = discriminator ? String(variant.properties?.[discriminator]?.const) : several ? String(index + 1) : '';
      return this.annotation(variant, `${wanted}${pascalCase(tag)}`, `${where}|${index + 1}`);
    });
    const joined = [...new Set(types)].join(' | ');
    return discriminator ? `Annotated[${joined}, Field(discriminator=${py(snakeCase(discriminator))})]` : joined;
  }
}

/** The property every object variant fixes to its own constant (e.g. `kind`), if any. */
function discriminatorOf(variants: JsonSchema[]): string | undefined {
  const first = variants[0];
  if (!first?.properties || variants.some((variant) => variant.type !== 'object')) return undefined;
  return Object.keys(first.properties).find((key) =>
    variants.every((variant) => variant.properties?.[key]?.const !== undefined && variant.required?.includes(key)),
  );
}

function constrained(base: string, kind: 'StringConstraints' | 'Field', constraints: Record<string, number | string | undefined>): string {
  const set = Object.entries(constraints).filter(([, value]) => value !== undefined);
  if (set.length === 0) return base;
  const args = set.map(([key, value]) => (key === 'pattern' ? `${key}=${JSON.stringify(value)}` : `${key}=${String(value)}`));
  return `Annotated[${base}, ${kind}(${args.join(', ')})]`;
}

const HEADER = `# Generated by scripts/generate-python-models.ts from the zod schemas (src/contract/, src/aggregator/schemas.ts)
# through schema.json: do not edit; run \`npm run python:models\` after changing a schema.
"""The contract's models: field names in snake_case, the wire's names as aliases (to_wire() sends those)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, StringConstraints

from .base import ContractModel`;

/** The generated files by path (relative to the repository), as this checkout's sources make them. */
export function generatedFiles(): Record<string, string> {
  const schema = contractSchema();
  return {
    [SCHEMA_PATH]: `${JSON.stringify(schema, null, 2)}\n`,
    [MODELS_PATH]: `${new PythonModels(schema.schemas).source()}\n`,
    [NAMES_PATH]: pythonNamesSource(),
  };
}

/** The generated files whose committed text differs from what the sources make now. */
export function driftedFiles(checkout: string = root): string[] {
  return Object.entries(generatedFiles())
    .filter(([path, text]) => {
      try {
        return readFileSync(join(checkout, path), 'utf8') !== text;
      } catch {
        return true;
      }
    })
    .map(([path]) => path);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv.includes('--check')) {
    const drifted = driftedFiles();
    if (drifted.length > 0) {
      process.stderr.write(`generate-python-models: ${drifted.join(', ')} differ from the TypeScript sources: run \`npm run python:models\`\n`);
      process.exit(1);
    }
    process.stdout.write('generate-python-models: the Python models and names match the TypeScript sources\n');
  } else {
    for (const [path, text] of Object.entries(generatedFiles())) writeFileSync(join(root, path), text);
    process.stdout.write(`generate-python-models: wrote ${Object.keys(generatedFiles()).join(', ')}\n`);
  }
}

/**
 * What the configuration reference says of a variable and of a group, carried by its zod schema
 * (doc, group), and the small schemas several sections share. scripts/lib/config-reference.ts renders
 * docs/configuration.md and .env.example from them (`npm run docs:config`).
 */
import { z } from 'zod';

/**
 * What the configuration reference says of a variable, carried by its schema (zod's `.meta()`):
 * scripts/generate-config-reference.ts writes docs/configuration.md and .env.example from it, and
 * test/docs/config-reference.test.ts fails when either file no longer matches.
 */
export interface VariableDoc {
  /** What it does, in sentences (markdown inline code allowed). */
  readonly description: string;
  /** The default in words, where the schema's own default does not say it (computed, or not text). */
  readonly defaultText?: string;
  /** The repository file that declares the default instead (`NAME=value` or `${NAME:-value}` lines). */
  readonly defaultFrom?: string;
  /** A secret: .env.example leaves it blank. */
  readonly secret?: boolean;
}

/** `schema` with what the reference says of its variable. */
export function doc<S extends z.ZodType>(schema: S, description: string, more: Omit<VariableDoc, 'description'> = {}): S {
  return schema.meta({ description, ...more });
}

/** What the reference says of a group of variables (a section of docs/configuration.md and .env.example). */
export interface GroupDoc {
  readonly title: string;
  readonly description: string;
  /** false: documented in docs/configuration.md only (tests, benchmarks), not in .env.example. */
  readonly envExample?: boolean;
}

export function group<S extends z.ZodObject>(schema: S, title: string, description: string, more: Omit<GroupDoc, 'title' | 'description'> = {}): S {
  return schema.meta({ title, description, ...more });
}

// The small schemas several sections share, each with its one-line message.

const PORT_RULE = { message: 'must be a port number, 0 to 65535' };
export const Port = z.coerce.number(PORT_RULE).int(PORT_RULE).min(0, PORT_RULE).max(65_535, PORT_RULE);
export const Bool = z.enum(['true', 'false', '1', '0']).transform((value) => value === 'true' || value === '1');

export const NonEmpty = z.string().trim().min(1, { message: 'must not be empty' });
export const CountAtLeast = (min: number) =>
  z.coerce
    .number()
    .int({ message: `must be a whole number, at least ${min}` })
    .min(min, { message: `must be a whole number, at least ${min}` });
export const HostPort = z
  .string()
  .trim()
  .regex(/^[^\s:]+:\d+$/, { message: 'must be host:port' });
export const HostName = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9.-]+$/, { message: 'must be a host name' });

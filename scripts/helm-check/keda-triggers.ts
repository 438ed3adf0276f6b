/**
 * What KEDA's temporal scaler reads, from its own source (pkg/scalers/temporal_scaler.go of the
 * pinned KEDA module, copied into the Temporal cache by `provision-temporal.sh helm`): the CRD types
 * a trigger's metadata as a map of strings, so a misspelt or removed parameter (buildId, gone in
 * v2.21) would pass its schema and be ignored by the scaler. Each rendered temporal trigger and
 * TriggerAuthentication is checked against the parameters the scaler declares.
 */
import { readFileSync } from 'node:fs';
import type { KubeObject, PolicyBreach } from './policy.js';

export interface TemporalScalerParameters {
  /** Read from the trigger's metadata. */
  readonly metadata: ReadonlySet<string>;
  /** Read from a TriggerAuthentication. */
  readonly auth: ReadonlySet<string>;
  /** Declared deprecated (removed or going). */
  readonly deprecated: ReadonlySet<string>;
  /** Neither optional nor defaulted. */
  readonly required: ReadonlySet<string>;
}

/** The parameters of the `keda:"name=..., order=..."` tags of temporal_scaler.go. */
export function temporalScalerParameters(sourcePath: string): TemporalScalerParameters {
  const source = readFileSync(sourcePath, 'utf8');
  const metadata = new Set<string>();
  const auth = new Set<string>();
  const deprecated = new Set<string>();
  const required = new Set<string>();
  for (const match of source.matchAll(/keda:"([^"]*)"/g)) {
    const fields = new Map(
      match[1]!.split(/,\s*/).map((field) => {
        const [key, ...rest] = field.split('=');
        return [key!.trim(), rest.join('=').trim()] as const;
      }),
    );
    const name = fields.get('name');
    const order = fields.get('order') ?? '';
    if (!name) continue;
    if (order.includes('triggerMetadata')) metadata.add(name);
    if (order.includes('authParams')) auth.add(name);
    if (fields.has('deprecated')) deprecated.add(name);
    if (!fields.has('optional') && !fields.has('default') && !fields.has('deprecated')) required.add(name);
  }
  if (metadata.size === 0) throw new Error(`${sourcePath}: no keda:"name=..., order=triggerMetadata" tags; is it KEDA's temporal scaler?`);
  return { metadata, auth, deprecated, required };
}

const nameOf = (object: KubeObject) => `${object.kind ?? '?'}/${object.metadata?.name ?? '?'}`;

export function kedaBreaches(objects: readonly KubeObject[], scaler: TemporalScalerParameters): PolicyBreach[] {
  const breaches: PolicyBreach[] = [];
  for (const object of objects) {
    const spec = object.spec as Record<string, unknown> | undefined;
    if (object.kind === 'ScaledObject') {
      for (const trigger of (spec?.triggers as { type?: string; metadata?: Record<string, string> }[] | undefined) ?? []) {
        if (trigger.type !== 'temporal') continue;
        const given = Object.keys(trigger.metadata ?? {});
        for (const key of given) {
          if (!scaler.metadata.has(key))
            breaches.push({ object: nameOf(object), rule: 'keda-trigger', detail: `the temporal scaler reads no metadata ${key}` });
          else if (scaler.deprecated.has(key))
            breaches.push({ object: nameOf(object), rule: 'keda-trigger', detail: `the temporal scaler's ${key} is deprecated` });
        }
        for (const key of scaler.required) {
          if (scaler.metadata.has(key) && !given.includes(key) && !given.includes(`${key}FromEnv`))
            breaches.push({ object: nameOf(object), rule: 'keda-trigger', detail: `the temporal trigger has no ${key}` });
        }
      }
    }
    if (object.kind === 'TriggerAuthentication') {
      for (const reference of (spec?.secretTargetRef as { parameter?: string }[] | undefined) ?? []) {
        if (!reference.parameter || !scaler.auth.has(reference.parameter))
          breaches.push({
            object: nameOf(object),
            rule: 'keda-trigger',
            detail: `the temporal scaler reads no auth parameter ${reference.parameter ?? '(none)'}`,
          });
      }
    }
  }
  return breaches;
}

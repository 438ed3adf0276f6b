/**
 * Completion callbacks' settings (docs/pipelines.md): where each tenant's callbacks may go, the
 * secrets they are signed with, which tenants take results in the body, and the pipeline entry's
 * public address that results sent by reference point at. Read by the worker (which delivers) and
 * by the processes that start connections (which refuse a URL outside the list at once).
 */
import { z } from 'zod';
import { CallbackUrls } from '../callbacks/callback-urls.js';
import { NO_CALLBACKS, type CallbackSettings } from '../callbacks/callback-policy.js';

export type { CallbackSettings };
import { ID_SEGMENT_PATTERN, ID_SEGMENT_SOURCE } from '../contract/ids.js';
import { doc, group } from './document.js';
import { keyedList } from './keyed-list.js';

/** `lender-a=/run/secrets/lender-a.webhook-secrets,...` → secrets file by customer id. */
const SecretFiles = keyedList({
  keySource: ID_SEGMENT_SOURCE,
  valueSource: '[^,=]+',
  rule: 'must be a comma-separated list of <customerId>=<file>',
  twice: (customerId) => `${customerId} appears twice`,
  read: (path) => path.trim(),
});

const TenantSet = z.string().transform((text, ctx) => {
  const tenants = new Set<string>();
  for (const raw of text.split(',')) {
    const tenant = raw.trim();
    if (tenant === '') continue;
    if (!ID_SEGMENT_PATTERN.test(tenant))
      ctx.addIssue({ code: 'custom', message: `${JSON.stringify(tenant)}: must be a comma-separated list of customer ids` });
    tenants.add(tenant);
  }
  return tenants;
});

export const CallbackVars = group(
  z.object({
    CALLBACK_URLS: doc(
      CallbackUrls.default(new Map()),
      "Where each tenant's completion callbacks may go: <customerId>=<url prefix>, comma-separated, a tenant listed once per prefix. https only, except to a listed IP address; a host named by DNS never reaches a private, loopback or link-local address. A connection whose callback URL is outside its tenant's prefixes is refused at start.",
      { defaultText: 'none: callbacks off' },
    ),
    CALLBACK_SECRET_FILES: doc(
      SecretFiles.default(new Map()),
      "<customerId>=<file>, comma-separated: each tenant's Standard Webhooks secrets, one `whsec_<base64>` per line, read at every attempt. Every secret in the file signs each message (a rotation: add the new line, let receivers take it, remove the old).",
      { defaultText: 'none' },
    ),
    CALLBACK_RESULT_IN_BODY: doc(
      TenantSet.default(new Set()),
      'Customer ids, comma-separated, whose connections may ask for the result itself in the callback body (`callback.includeResult`). Others get a reference to fetch once from the pipeline entry.',
      { defaultText: 'none' },
    ),
    PIPELINE_ENTRY_URL: doc(
      z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
      "The pipeline entry's address as receivers reach it: a result sent by reference is fetched at <PIPELINE_ENTRY_URL>/v1/results/<customerId>/<webhook-id>. Required with CALLBACK_URLS.",
      { defaultText: 'none' },
    ),
  }),
  'Completion callbacks',
  'Signed callbacks (Standard Webhooks) that tell a pipeline without Temporal a connection ended (docs/pipelines.md).',
);

type CallbackEnv = z.infer<typeof CallbackVars>;

/** The section, with an issue when callbacks are on without the entry's address. */
export function callbackSection(env: CallbackEnv, ctx: z.RefinementCtx): CallbackSettings {
  if (env.CALLBACK_URLS.size > 0 && env.PIPELINE_ENTRY_URL === undefined) {
    ctx.addIssue({ code: 'custom', path: ['PIPELINE_ENTRY_URL'], message: 'is required with CALLBACK_URLS (results sent by reference are fetched there)' });
  }
  return Object.freeze({
    urls: env.CALLBACK_URLS,
    secretFiles: env.CALLBACK_SECRET_FILES,
    resultInBody: env.CALLBACK_RESULT_IN_BODY,
    entryUrl: env.PIPELINE_ENTRY_URL ?? NO_CALLBACKS.entryUrl,
  });
}

/**
 * A setting that gives each tenant its own number: `lender-a:3,lender-b:1,*:2` (`*` for every other
 * tenant), read into a map by customer id. Each entry that is not `<customerId>:<number>` in range,
 * and each tenant named twice, is an issue naming the entry.
 */
import { z } from 'zod';
import { ID_SEGMENT_SOURCE } from '../contract/ids.js';

/** `number` is the pattern of a value (`\d{1,5}`); `inRange` says whether its number is allowed; `rule` is the whole list's, said on each bad entry. */
export function perTenantList(number: string, inRange: (value: number) => boolean, rule: string) {
  const entryPattern = new RegExp(`^(${ID_SEGMENT_SOURCE}|\\*):(${number})$`);
  return z.string().transform((text, ctx) => {
    const values = new Map<string, number>();
    for (const raw of text.split(',')) {
      const entry = raw.trim();
      if (entry === '') continue;
      const match = entryPattern.exec(entry);
      const value = Number(match?.[2]);
      if (!match?.[1] || !inRange(value)) ctx.addIssue({ code: 'custom', message: `${JSON.stringify(entry)}: ${rule}` });
      else if (values.has(match[1])) ctx.addIssue({ code: 'custom', message: `${match[1]} appears twice` });
      else values.set(match[1], value);
    }
    return values;
  });
}

/**
 * `pipeline-key create <customerId>`: mints a key for the pipeline entry (`npm run pipeline-entry`)
 * and prints it once, with the line its tenant's file takes (PIPELINE_KEY_FILES holds hashes only).
 * Nothing is stored or changed: the key takes effect when an administrator adds the line to the file,
 * and is revoked by removing it. An administrator of the tenant may mint one (CLI_ROLE_MAP); the key
 * is printed on stdout alone, so `> key.txt` keeps it out of the terminal's scrollback.
 */
import { TenantSegment } from '../../../client/business-key.js';
import { keyHashPrefix, mintPipelineKey } from '../../../identity/pipeline-keys.js';
import { onePositional, parseFlags, UsageError } from '../../args.js';
import type { Command } from '../../command.js';
import { EXIT_OK } from '../../report.js';

export const create: Command = {
  access: { permission: 'administer', tenant: 'first-argument' },
  summary: "mint a tenant's pipeline key: printed once, with the hash line for its key file",
  usage: (program) => `Usage: ${program} pipeline-key create <customerId>

Mints a key for the pipeline entry (a pipeline without Temporal starts, reads and cancels its
tenant's connections with it as Authorization: Bearer <key>). The key goes to stdout, once: the
product keeps no copy. On stderr, the line to append to the tenant's file in PIPELINE_KEY_FILES (the
key's SHA-256): the entry takes the key as soon as the line is there, without a restart. To rotate,
add the new key's line, move the pipeline to the new key, then remove the old line.`,

  // eslint-disable-next-line @typescript-eslint/require-await
  async run(args, { io }) {
    const { positionals } = parseFlags({ args: [...args], options: {}, allowPositionals: true });
    const customerId = onePositional(positionals, '<customerId>');
    const checked = TenantSegment.safeParse(customerId);
    if (!checked.success) throw new UsageError(`<customerId> ${checked.error.issues[0]?.message ?? 'is invalid'}: ${JSON.stringify(customerId)}`);
    const { key, hash } = mintPipelineKey();
    io.out(key);
    io.err(
      `pipeline-key: a key for ${customerId} (hash ${keyHashPrefix(hash)}…), shown once above. Add this line to ${customerId}'s file in PIPELINE_KEY_FILES:`,
    );
    io.err(hash);
    return EXIT_OK;
  },
};

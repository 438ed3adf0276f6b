/**
 * `tenant forget`: forgets a lender. Its key per tenant is destroyed in the KMS, so every payload of
 * its work (histories, the payload store, reports) is unreadable for good; its running workflows are
 * terminated and its schedules deleted first, so nothing of it runs on against a key that is gone.
 * Whether this token may destroy the key is asked before anything changes: a refusal changes nothing.
 */
import { isKmsEncryption, type EncryptionSettings } from '../../../../codec/key-provider.js';
import { VaultClient } from '../../../../codec/vault-client.js';
import { checkMayDestroyTenantKey, destroyTenantKey, tenantTransitKey, VAULT_TRANSIT } from '../../../../codec/vault-transit.js';
import { TenantSegment } from '../../../business-key.js';
import { printable } from '../../../presentation.js';
import { onePositional, parseFlags, UsageError } from '../../args.js';
import type { Command } from '../../command.js';
import { EXIT_FAILED, EXIT_OK } from '../../report.js';

export const forget: Command = {
  summary: "forget a lender: its running work ended, its key per tenant destroyed",
  usage: (program) => `Usage: ${program} tenant forget <customerId> [--yes]

Destroys the lender's own transit key (<PAYLOAD_VAULT_TRANSIT_KEY>-tenant-<customerId>), so every
payload of its work, in Temporal's histories, in the payload store and in reports, is unreadable for
good; other tenants are untouched. First its running workflows are terminated and its schedules
deleted. Asks you to type the customer id again (from stdin) unless --yes. Needs PAYLOAD_KEY_PROVIDER=
vault-transit with keys per tenant, and a token that may update the key's config and delete the key
(an administrator's, not the worker's): checked before anything is changed. Cannot be undone.
  --yes                 do not ask (scripts)`,

  async run(args, context) {
    const { values, positionals } = parseFlags({ args: [...args], options: { yes: { type: 'boolean' } }, allowPositionals: true });
    const customerId = onePositional(positionals, '<customerId>');
    const checked = TenantSegment.safeParse(customerId);
    if (!checked.success) throw new UsageError(`<customerId> ${checked.error.issues[0]?.message ?? 'is invalid'}: ${JSON.stringify(customerId)}`);
    const { io } = context;
    const encryption = context.config().encryption;
    if (!isKmsEncryption(encryption) || encryption.provider !== VAULT_TRANSIT || !encryption.tenantKeys) {
      io.err(
        `tenant forget: nothing changed: a lender's payloads have a key of their own only with PAYLOAD_KEY_PROVIDER=vault-transit and PAYLOAD_TENANT_KEYS=true (here: ${keysHere(encryption)}); docs/operations.md, "Forgetting a lender"`,
      );
      return EXIT_FAILED;
    }
    const key = tenantTransitKey(encryption.transit.key, customerId);
    if (!values.yes) {
      io.err(`This destroys transit key "${key}": every payload of tenant "${customerId}" becomes unreadable for good. Type the customer id to go on:`);
      const typed = (await io.readStdin()).trim();
      if (typed !== customerId) {
        io.err(`tenant forget: not confirmed (${typed === '' ? 'nothing typed' : 'another id typed'}): nothing changed`);
        return EXIT_FAILED;
      }
    }
    const vault = new VaultClient(encryption.vault, VAULT_TRANSIT);
    await checkMayDestroyTenantKey(vault, encryption.transit, customerId);
    const ended = await (await context.client()).tenants.endWork(customerId, `tenant ${customerId} forgotten: its key is being destroyed`);
    const destruction = await destroyTenantKey(vault, encryption.transit, customerId);
    io.out(`forgot tenant ${printable(customerId)}`);
    io.out(`  workflows  ${ended.workflowsTerminated} running terminated`);
    io.out(`  schedules  ${ended.schedulesDeleted} deleted`);
    io.out(`  key        ${printable(key)} ${destruction === 'destroyed' ? 'destroyed' : 'already gone'}: its payloads are unreadable for good`);
    return EXIT_OK;
  },
};

/** How this configuration keys payloads, for the refusal above. */
function keysHere(encryption: EncryptionSettings | undefined): string {
  if (encryption === undefined) return 'encryption off';
  if (!isKmsEncryption(encryption)) return 'static keys, one for all tenants';
  return encryption.tenantKeys ? encryption.provider : `${encryption.provider}, one key for all tenants`;
}

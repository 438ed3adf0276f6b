/**
 * `tenant forget`: forgets a lender. Its key per tenant is destroyed (in the KMS, or its key file in
 * static mode), so every payload of its work (histories, the payload store, reports) is unreadable for
 * good; its running workflows are terminated and its schedules deleted first, so nothing of it runs on
 * against a key that is gone. Whether the key may be destroyed is asked before anything changes: a
 * refusal changes nothing.
 */
import { accessSync, constants } from 'node:fs';
import { isKmsEncryption, type EncryptionSettings } from '../../../codec/key-provider.js';
import { VaultClient } from '../../../codec/vault-client.js';
import { destroyTenantKeyFile, tenantKeyFilePath, type TenantKeyFiles } from '../../../codec/tenant-key-files.js';
import { checkMayDestroyTenantKey, destroyTenantKey, tenantTransitKey, VAULT_TRANSIT } from '../../../codec/vault-transit.js';
import { TenantSegment } from '../../../client/business-key.js';
import { printable } from '../../terminal-view.js';
import { onePositional, parseFlags, UsageError } from '../../args.js';
import type { Command } from '../../command.js';
import { EXIT_FAILED, EXIT_OK } from '../../report.js';

export const forget: Command = {
  access: { permission: 'administer', tenant: 'first-argument' },
  audit: { action: 'tenant.forget' },
  summary: 'forget a lender: its running work ended, its key per tenant destroyed',
  usage: (program) => `Usage: ${program} tenant forget <customerId> [--yes]

Destroys the lender's own key, so every payload of its work, in Temporal's histories, in the payload
store and in reports, is unreadable for good; other tenants are untouched. First its running
workflows are terminated and its schedules deleted. Asks you to type the customer id again (from
stdin) unless --yes. Cannot be undone. Needs keys per tenant, either:
  - PAYLOAD_KEY_PROVIDER=vault-transit: the transit key <PAYLOAD_VAULT_TRANSIT_KEY>-tenant-<customerId>
    is deleted, with a token that may update its config and delete it (an administrator's, not the
    worker's);
  - PAYLOAD_KEY_PROVIDER=static with PAYLOAD_TENANT_KEYS_DIR: the file <dir>/<customerId>.key is
    overwritten with zeros and removed (every process drops the key within 10 s).
Whether the key may be destroyed is checked before anything is changed.
  --yes                 do not ask (scripts)`,

  async run(args, context) {
    const { values, positionals } = parseFlags({ args: [...args], options: { yes: { type: 'boolean' } }, allowPositionals: true });
    const customerId = onePositional(positionals, '<customerId>');
    const checked = TenantSegment.safeParse(customerId);
    if (!checked.success) throw new UsageError(`<customerId> ${checked.error.issues[0]?.message ?? 'is invalid'}: ${JSON.stringify(customerId)}`);
    const { io } = context;
    const encryption = context.config().encryption;
    const destroyer = tenantKeyDestroyer(encryption, customerId);
    if (!destroyer) {
      io.err(
        `tenant forget: nothing changed: a lender's payloads have a key of their own only with PAYLOAD_KEY_PROVIDER=vault-transit and PAYLOAD_TENANT_KEYS=true, or PAYLOAD_KEY_PROVIDER=static with PAYLOAD_TENANT_KEYS_DIR (here: ${keysHere(encryption)}); docs/operations.md, "Forgetting a lender"`,
      );
      return EXIT_FAILED;
    }
    const key = destroyer.key;
    if (!values.yes) {
      io.err(`This destroys ${destroyer.kind} "${key}": every payload of tenant "${customerId}" becomes unreadable for good. Type the customer id to go on:`);
      const typed = (await io.readStdin()).trim();
      if (typed !== customerId) {
        io.err(`tenant forget: not confirmed (${typed === '' ? 'nothing typed' : 'another id typed'}): nothing changed`);
        return EXIT_FAILED;
      }
    }
    await destroyer.checkMayDestroy();
    const ended = await (await context.client()).tenants.endWork(customerId, `tenant ${customerId} forgotten: its key is being destroyed`);
    const destruction = await destroyer.destroy();
    io.out(`forgot tenant ${printable(customerId)}`);
    io.out(`  workflows  ${ended.workflowsTerminated} running terminated`);
    io.out(`  schedules  ${ended.schedulesDeleted} deleted`);
    io.out(`  key        ${printable(key)} ${destruction === 'destroyed' ? 'destroyed' : 'already gone'}: its payloads are unreadable for good`);
    return EXIT_OK;
  },
};

/** How one tenant's key is destroyed under this configuration; undefined when its payloads have no key of their own. */
interface TenantKeyDestroyer {
  readonly kind: 'transit key' | 'key file';
  /** The key's name, or its file's path. */
  readonly key: string;
  /** Throws, changing nothing, when this process may not destroy it. */
  checkMayDestroy(): Promise<void>;
  destroy(): Promise<'destroyed' | 'already-gone'>;
}

function tenantKeyDestroyer(encryption: EncryptionSettings | undefined, customerId: string): TenantKeyDestroyer | undefined {
  if (encryption === undefined) return undefined;
  if (!isKmsEncryption(encryption)) return encryption.tenantKeyFiles ? keyFileDestroyer(encryption.tenantKeyFiles, customerId) : undefined;
  if (encryption.provider !== VAULT_TRANSIT || !encryption.tenantKeys) return undefined;
  const vault = new VaultClient(encryption.vault, VAULT_TRANSIT);
  return {
    kind: 'transit key',
    key: tenantTransitKey(encryption.transit.key, customerId),
    checkMayDestroy: () => checkMayDestroyTenantKey(vault, encryption.transit, customerId),
    destroy: () => destroyTenantKey(vault, encryption.transit, customerId),
  };
}

function keyFileDestroyer(files: TenantKeyFiles, customerId: string): TenantKeyDestroyer {
  const path = tenantKeyFilePath(files.dir, customerId);
  return {
    kind: 'key file',
    key: path,
    checkMayDestroy() {
      // Removing a file needs the directory writable; an unwritable one is refused before any work ends.
      try {
        accessSync(files.dir, constants.W_OK);
        return Promise.resolve();
      } catch (error) {
        return Promise.reject(
          new Error(
            `tenant forget: nothing changed: ${files.dir} is not writable by this user (${(error as NodeJS.ErrnoException).code ?? 'denied'}), so ${path} could not be removed`,
            { cause: error },
          ),
        );
      }
    },
    destroy: () => Promise.resolve(destroyTenantKeyFile(path)),
  };
}

/** How this configuration keys payloads, for the refusal above. */
function keysHere(encryption: EncryptionSettings | undefined): string {
  if (encryption === undefined) return 'encryption off';
  if (!isKmsEncryption(encryption)) return encryption.tenantKeyFiles ? 'static keys per tenant' : 'static keys, one for all tenants';
  return encryption.tenantKeys ? encryption.provider : `${encryption.provider}, one key for all tenants`;
}

/**
 * Each tenant's webhook secrets (CALLBACK_SECRET_FILES: `<customerId>=<file>`): a file of
 * `whsec_<base64>` lines (blank lines and `#` comments skipped), read at every delivery attempt, so a
 * rotation is an edit of the file: add the new secret, let receivers accept it, remove the old one.
 * While both are there each message carries both signatures.
 */
import { readFile } from 'node:fs/promises';
import { secretBytes, WebhookSecretError } from './webhook-signature.js';

/** The tenant's current secrets; WebhookSecretError naming the tenant and the file when there is none or one is malformed. */
export async function readWebhookSecrets(files: ReadonlyMap<string, string>, customerId: string): Promise<string[]> {
  const path = files.get(customerId);
  if (path === undefined) throw new WebhookSecretError(`tenant ${customerId} has no webhook secret file (CALLBACK_SECRET_FILES)`);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new WebhookSecretError(`cannot read the webhook secret file of tenant ${customerId} (${path}): ${(error as Error).message}`, { cause: error });
  }
  const secrets = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  secrets.forEach((secret, index) => {
    try {
      secretBytes(secret);
    } catch (error) {
      throw new WebhookSecretError(`the webhook secret file of tenant ${customerId} (${path}), line ${index + 1} of its secrets: ${(error as Error).message}`);
    }
  });
  if (secrets.length === 0) throw new WebhookSecretError(`the webhook secret file of tenant ${customerId} (${path}) holds no secret`);
  return secrets;
}

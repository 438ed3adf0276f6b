/**
 * `--authorization`: the fleet's Temporal token in a file, renewed as a deployment's sidecar renews it
 * (a Kubernetes projected service-account token, a Vault agent template): a short-lived token, a new
 * one written well before it expires, each write a whole file put in place by rename so a reader never
 * sees half a token. The workers and the driver read it through TEMPORAL_API_KEY_FILE.
 */
import { rename, writeFile } from 'node:fs/promises';
import type { TokenProvider } from '../lib/jwt-token-provider.js';

export class TokenSidecar {
  private renewals = 0;
  private failures: string[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  /** When the first token was minted (Date.now()). */
  readonly startedAt = Date.now();

  private constructor(
    readonly path: string,
    private readonly tokens: TokenProvider,
    private readonly permissions: readonly string[],
    /** Each token lives this long. */
    readonly ttlS: number,
  ) {}

  /** Writes the first token, then a new one every `everyMs`. */
  static async start(
    path: string,
    tokens: TokenProvider,
    { permissions, ttlS, everyMs }: { permissions: readonly string[]; ttlS: number; everyMs: number },
  ): Promise<TokenSidecar> {
    const sidecar = new TokenSidecar(path, tokens, permissions, ttlS);
    await sidecar.write();
    sidecar.timer = setInterval(() => {
      sidecar.writing = sidecar.write().then(
        () => void (sidecar.renewals += 1),
        (error: unknown) => void sidecar.failures.push(error instanceof Error ? error.message : String(error)),
      );
    }, everyMs);
    return sidecar;
  }

  /** Tokens written after the first. */
  get renewed(): number {
    return this.renewals;
  }

  /** Writes that failed (the run then fails: a sidecar that cannot renew is an outage in waiting). */
  get problems(): readonly string[] {
    return this.failures;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.writing;
  }

  private async write(): Promise<void> {
    const token = await this.tokens.token(this.permissions, { expiresIn: `${this.ttlS}s` });
    const partial = `${this.path}.partial`;
    await writeFile(partial, `${token}\n`, { mode: 0o600 });
    await rename(partial, this.path);
  }
}

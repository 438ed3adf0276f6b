/**
 * A small client of HashiCorp Vault's (and OpenBao's) HTTP API, enough for the transit key provider:
 * JSON over node:https (its `ca` option takes the CA file; global fetch cannot without another
 * package), token or AppRole auth, the namespace header. No Vault SDK. An AppRole token is fetched
 * at the first call, renewed by logging in again before its lease ends, and once more when Vault
 * answers 403 (revoked, or expired early). Network errors, timeouts, 429 and 5xx (sealed, standby,
 * overloaded) are KeyProviderUnavailableError; any other answer goes back to the caller.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { KeyProviderRefusedError, KeyProviderUnavailableError, type KeyProviderOperation } from './payload-errors.js';

export type VaultAuth =
  { readonly kind: 'token'; readonly token: string } | { readonly kind: 'approle'; readonly mount: string; readonly roleId: string; readonly secretId: string };

export interface VaultSettings {
  /** http(s)://host:port */
  readonly address: string;
  readonly auth: VaultAuth;
  /** Sent as X-Vault-Namespace (Vault Enterprise, OpenBao namespaces). */
  readonly namespace?: string | undefined;
  /** PEM of the CA(s) that signed Vault's certificate, instead of the system's. */
  readonly caCertificate?: string | undefined;
  readonly timeoutMs: number;
}

export type VaultMethod = 'GET' | 'POST' | 'DELETE';

export interface VaultAnswer {
  readonly status: number;
  /** The parsed JSON body ({} when empty). */
  readonly body: { readonly data?: Record<string, unknown>; readonly auth?: Record<string, unknown>; readonly errors?: readonly string[] };
}

/** Renew an AppRole token this long before its lease ends. */
const RENEW_MARGIN = 0.8;

export class VaultClient {
  private token: { readonly value: string; readonly renewAt: number } | undefined;
  private login: Promise<string> | undefined;

  constructor(
    private readonly settings: VaultSettings,
    /** Names the provider in errors. */
    private readonly provider: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** POST `path` (under /v1/) as this client; KeyProviderUnavailableError when Vault cannot answer. */
  post(path: string, body: unknown, operation: KeyProviderOperation): Promise<VaultAnswer> {
    return this.request('POST', path, body, operation);
  }

  /** Any call (a GET has no body): the transit provider POSTs; the tests' OpenBao helper also reads. */
  async request(method: VaultMethod, path: string, body: unknown, operation: KeyProviderOperation): Promise<VaultAnswer> {
    const answer = await this.send(method, path, body, operation, await this.currentToken());
    if (answer.status !== 403 || this.settings.auth.kind !== 'approle') return answer;
    this.token = undefined;
    return this.send(method, path, body, operation, await this.currentToken());
  }

  private async currentToken(): Promise<string> {
    const { auth } = this.settings;
    if (auth.kind === 'token') return auth.token;
    if (this.token && this.token.renewAt > this.now()) return this.token.value;
    this.login ??= this.logIn(auth).finally(() => {
      this.login = undefined;
    });
    return this.login;
  }

  private async logIn(auth: Extract<VaultAuth, { kind: 'approle' }>): Promise<string> {
    const answer = await this.send('POST', `auth/${auth.mount}/login`, { role_id: auth.roleId, secret_id: auth.secretId }, 'login', undefined);
    const token = answer.body.auth?.client_token;
    if (answer.status !== 200 || typeof token !== 'string')
      throw new KeyProviderRefusedError(this.provider, 'login', answer.status, errorsOf(answer, `AppRole login at auth/${auth.mount} refused`));
    const lease = Number(answer.body.auth?.lease_duration ?? 0);
    this.token = { value: token, renewAt: lease > 0 ? this.now() + lease * 1000 * RENEW_MARGIN : Number.POSITIVE_INFINITY };
    return token;
  }

  private async send(method: VaultMethod, path: string, body: unknown, operation: KeyProviderOperation, token: string | undefined): Promise<VaultAnswer> {
    const url = new URL(`/v1/${path}`, this.settings.address);
    const payload = body === undefined ? '' : JSON.stringify(body);
    const headers: Record<string, string> =
      body === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) };
    if (token !== undefined) headers['x-vault-token'] = token;
    if (this.settings.namespace) headers['x-vault-namespace'] = this.settings.namespace;
    let response: { status: number; text: string };
    try {
      response = await exchange(url, { method, headers, timeout: this.settings.timeoutMs }, payload, this.settings.caCertificate);
    } catch (error) {
      throw new KeyProviderUnavailableError(this.provider, operation, `${url.origin} did not answer: ${(error as Error).message}`, { cause: error });
    }
    const answer: VaultAnswer = { status: response.status, body: parseBody(response.text) };
    if (answer.status === 429 || answer.status >= 500) {
      throw new KeyProviderUnavailableError(this.provider, operation, `${url.origin} answered HTTP ${answer.status}: ${errorsOf(answer, 'no reason given')}`);
    }
    return answer;
  }
}

/** Vault's `errors`, joined, or `fallback`. */
export function errorsOf(answer: VaultAnswer, fallback: string): string {
  const errors = answer.body.errors?.filter((error) => typeof error === 'string' && error !== '');
  return errors && errors.length > 0 ? errors.join('; ').slice(0, 500) : fallback;
}

function parseBody(text: string): VaultAnswer['body'] {
  if (text.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed !== null && typeof parsed === 'object' ? parsed : {};
  } catch {
    return { errors: [`a body that is not JSON: ${text.slice(0, 200)}`] };
  }
}

interface RequestOptions {
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly timeout: number;
}

function exchange(url: URL, options: RequestOptions, body: string, ca: string | undefined): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const onResponse = (response: IncomingMessage): void => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    };
    const request = url.protocol === 'https:' ? httpsRequest(url, { ...options, ...(ca ? { ca } : {}) }, onResponse) : httpRequest(url, options, onResponse);
    request.on('timeout', () => request.destroy(new Error(`no answer within ${options.timeout} ms`)));
    request.on('error', reject);
    request.end(body);
  });
}

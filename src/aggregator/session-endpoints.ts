/**
 * The session endpoint of the aggregation client: Authorize, in each of its four modes (live with
 * credentials, cached, live refresh of a saved login, answers to a challenge). The one call that may
 * answer with challenges, and the one that waits longest (its own default timeout, from client.ts).
 */
import { AuthorizeRequest, AuthorizeResponse, type SecurityResponses } from './schemas.js';
import type { DataReader } from './data-reader.js';
import type { CallOptions, Challenge, Pending, Ready, Send, TenantPaths } from './exchange.js';
import { validated } from './request-checks.js';

export type AuthorizeResult = Ready<AuthorizeResponse> | Challenge | Pending;

export interface LiveAuthorize {
  readonly institution: string;
  readonly username: string;
  readonly password: string;
  readonly save?: boolean | undefined;
}

/** An Authorize's answer is all acted on (the session, the challenges): its envelope is the whole schema. */
const AUTHORIZE_READER: DataReader<AuthorizeResponse> = { envelope: AuthorizeResponse, view: AuthorizeResponse };

export function sessionEndpoints(send: Send, { banking, bankingRoute }: TenantPaths, authorizeTimeoutMs: number) {
  return {
    /** POST /v3/{customerId}/BankingServices/Authorize, any of its four modes. */
    async authorize(request: AuthorizeRequest, call?: CallOptions): Promise<AuthorizeResult> {
      const body = validated(AuthorizeRequest, request, 'Authorize');
      return send({
        operation: 'Authorize',
        method: 'post',
        path: `${banking}/Authorize`,
        route: `${bankingRoute}/Authorize`,
        body,
        ready: AUTHORIZE_READER,
        options: call,
        defaultTimeoutMs: authorizeTimeoutMs,
      });
    },

    /** Live mode: the end user's credentials; may answer with challenges. */
    authorizeLive(login: LiveAuthorize, call?: CallOptions): Promise<AuthorizeResult> {
      return this.authorize(
        { Institution: login.institution, Username: login.username, Password: login.password, MostRecentCached: false, Save: login.save ?? false },
        call,
      );
    },

    /** Cached mode: a saved LoginId, already processed data. */
    authorizeCached(loginId: string, call?: CallOptions): Promise<AuthorizeResult> {
      return this.authorize({ LoginId: loginId, MostRecentCached: true }, call);
    },

    /** Live refresh of a saved login (trusted-device flow); may answer with challenges. */
    authorizeRefresh(loginId: string, call?: CallOptions): Promise<AuthorizeResult> {
      return this.authorize({ LoginId: loginId, MostRecentCached: false, Save: true }, call);
    },

    /** Answers the pending challenge(s) of a session; every prompt at once. */
    answerChallenge(requestId: string, responses: SecurityResponses, call?: CallOptions): Promise<AuthorizeResult> {
      return this.authorize({ RequestId: requestId, SecurityResponses: responses }, call);
    },
  };
}

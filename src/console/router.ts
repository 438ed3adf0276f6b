/**
 * The console's route table: method + path pattern → handler. A pattern is matched against the
 * raw (still percent-encoded) path: `/api/connections/:workflowId` captures one non-empty segment,
 * `:action(encode|decode)` only what the expression (which holds no "/") matches.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuditAction } from '../audit/audit-entry.js';
import type { Permission, Principal } from '../identity/roles.js';
import type { JsonReply } from '../http/json-http.js';

export type Params = Readonly<Record<string, string>>;

export interface RouteCall {
  readonly request: IncomingMessage;
  readonly url: URL;
  /** The captured segments, as sent: a handler decodes what it takes (safeDecode). */
  readonly params: Params;
  /** What the caller's credential allows (auth.ts): decided before the handler runs. */
  readonly grant: Grant;
  /** Who is calling, with their roles per tenant. */
  readonly principal: Principal;
  /**
   * Refuses (403, naming the role it needs) unless the caller may do `permission` (the route's, by
   * default) on `tenant`'s work (undefined: work of no tenant, which needs a role on every tenant).
   * A handler awaits it as soon as it knows the tenant, before it reads or changes anything: on an
   * audited route it also records the attempt (a 503 AuditUnavailable when it cannot).
   */
  authorize(this: void, tenant: string | undefined, permission?: Permission): Promise<void>;
  /**
   * For a route that decides per item (authorizesEachPayload): records, once per tenant, that the
   * caller is about to act on `tenant`'s items it may act on (a 503 AuditUnavailable when it cannot),
   * or, `refused`, that its roles kept it from them.
   */
  recordAccess(this: void, tenant: string | undefined, refused?: 'refused'): Promise<void>;
  /** The ids of the attempts this request has recorded so far (a read of the trail leaves its own out). */
  recordedIds(this: void): readonly string[];
}

/** What the audit trail records of a route's calls (src/audit): every route that does more than read has one. */
export interface RouteAudit {
  readonly action: AuditAction;
  /** The connection, login or refresh acted on, from the path. */
  readonly target?: (params: Params) => string | undefined;
  /** What was asked beyond the action (`pause`), from the path. */
  readonly detail?: (params: Params) => string | undefined;
  /** How it ended beyond ok (an answer's outcome), from the reply's body. */
  readonly outcome?: (body: unknown) => string | undefined;
}

/** `console`: the console token; `decode`: a credential that decodes only; `encode`: the encode token. */
export type Grant = 'console' | 'decode' | 'encode';

/**
 * Runs before authentication on every request to the route's path, whatever its method, so that
 * each answer (a 401 too) carries the headers an allowed origin needs; true when it has answered
 * the request itself (a preflight).
 */
export type CorsPolicy = (request: IncomingMessage, response: ServerResponse) => boolean;

export interface Route {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  /** What the route does, as a role grants it: the handler checks it on the tenant it acts on (RouteCall.authorize). */
  readonly permission: Permission;
  /** The handler decides per item instead of calling authorize (the codec: each payload by its tenant). */
  readonly authorizesEachPayload?: boolean;
  /** Recorded in the audit trail; required of every route whose permission is not `read`. */
  readonly audit?: RouteAudit;
  readonly handler: (call: RouteCall) => Promise<JsonReply>;
  readonly cors?: CorsPolicy;
}

/** The routes whose pattern matched the path; `route` is the one for the method, if any (else 405). */
export interface RouteMatch {
  readonly route: Route | undefined;
  readonly allowed: readonly string[];
  readonly params: Params;
  readonly cors: CorsPolicy | undefined;
}

export type Router = (method: string, pathname: string) => RouteMatch | undefined;

export function createRouter(routes: readonly Route[]): Router {
  // A route that changes or decodes anything and records nothing would act unseen: refused at start.
  const unaudited = routes.filter((route) => route.permission !== 'read' && route.audit === undefined);
  if (unaudited.length > 0) throw new Error(`console routes without an audit record: ${unaudited.map((route) => `${route.method} ${route.path}`).join(', ')}`);
  const compiled = routes.map((route) => ({ route, pattern: compile(route.path) }));
  return (method, pathname) => {
    const matched = compiled.flatMap(({ route, pattern }) => {
      const match = pattern.exec(pathname);
      return match ? [{ route, params: { ...match.groups } }] : [];
    });
    const [first] = matched;
    if (first === undefined) return undefined;
    const chosen = matched.find((m) => m.route.method === method);
    return {
      route: chosen?.route,
      allowed: [...new Set(matched.map((m) => m.route.method))],
      params: (chosen ?? first).params,
      cors: matched.find((m) => m.route.cors)?.route.cors,
    };
  };
}

function compile(path: string): RegExp {
  const source = path
    .split('/')
    .map((segment) => {
      const param = /^:([A-Za-z]\w*)(?:\((.+)\))?$/.exec(segment);
      if (!param) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      return `(?<${param[1] ?? ''}>${param[2] ?? '[^/]+'})`;
    })
    .join('/');
  return new RegExp(`^${source}$`);
}

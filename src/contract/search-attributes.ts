// The custom search attributes our connection workflows upsert: the single source of their names and
// types. Workflows upsert through the typed keys; servers (dev server, test helpers, compose) register
// CONNECTION_SEARCH_ATTRIBUTES. Deterministic and import-free apart from @temporalio/common.
import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributePair } from '@temporalio/common';

/** Where the connection is in its life: Authorizing, AwaitingAnswer, Retrieving, Completed, Failed. */
export const ConnectionStatusKey = defineSearchAttributeKey('ConnectionStatus', SearchAttributeType.KEYWORD);
/** The aggregation-service tenant the connection belongs to. */
export const CustomerIdKey = defineSearchAttributeKey('CustomerId', SearchAttributeType.KEYWORD);
/** The financial institution being connected to. */
export const InstitutionKey = defineSearchAttributeKey('Institution', SearchAttributeType.KEYWORD);
/** The service's login id, once a session exists (cached mode and refreshes start with it). */
export const LoginIdKey = defineSearchAttributeKey('LoginId', SearchAttributeType.KEYWORD);

/**
 * Set when the login needs its end user to authenticate: the challenge type that showed it (a two-step
 * TextOrCall or trusted-device WaitUntilEUAccept in any connection, or any challenge an unattended
 * scheduled run met). `LoginId = "..." AND EndUserChallenge IS NOT NULL` finds why a login cannot be
 * refreshed on a schedule.
 */
export const EndUserChallengeKey = defineSearchAttributeKey('EndUserChallenge', SearchAttributeType.KEYWORD);

/** The cadence (a name such as `nightly`) a login is enrolled in for its book's refresh: on book entries and book refreshes. */
export const BookCadenceKey = defineSearchAttributeKey('BookCadence', SearchAttributeType.KEYWORD);

/** Every custom search attribute, as {name, type}, for servers to register before workflows run. */
export const CONNECTION_SEARCH_ATTRIBUTES = [ConnectionStatusKey, CustomerIdKey, InstitutionKey, LoginIdKey, EndUserChallengeKey, BookCadenceKey] as const;

/** The session part of a connection's input that visibility shows from its start (structural: this module imports no schema). */
type StartingSession = { readonly kind: 'live'; readonly institution: string } | { readonly kind: 'cached' | 'refresh'; readonly loginId: string };

/**
 * What every connection starts with in visibility, whoever starts it (the pipeline client, a Nexus
 * relay, a book refresh): Authorizing, its tenant, and its institution (live) or its login.
 */
/** The status a connection starts with in visibility, until its first step moves it on. */
export const STARTING_STATUS = 'Authorizing';

export function connectionStartAttributes(input: { readonly customerId: string; readonly session: StartingSession }): SearchAttributePair[] {
  const { customerId, session } = input;
  return [
    { key: ConnectionStatusKey, value: STARTING_STATUS },
    { key: CustomerIdKey, value: customerId },
    session.kind === 'live' ? { key: InstitutionKey, value: session.institution } : { key: LoginIdKey, value: session.loginId },
  ];
}

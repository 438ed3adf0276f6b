/**
 * The data endpoints of the aggregation client: what a session reads once it is open. The banking
 * services' (accounts detail and summary, each with its poll, statements) and those of a saved login
 * (investments, attributes, DeleteCard). None of them challenges: a 203 there breaks the contract.
 */
import type { z } from 'zod';
import {
  AccountsDetailRequest,
  AccountsDetailResponse,
  AccountsSummaryResponse,
  AttributePackageOperation,
  AttributesRequest,
  type AttributesResponse,
  DeleteCardResponse,
  InvestmentsResponse,
  StatementsRequest,
  StatementsResponse,
  Uuid,
  type AccountsDetailOptions,
  type NumberOfStatements,
} from './schemas.js';
import { UnexpectedResponseError } from './errors.js';
import { AccountsEnvelope, attributesReader, DeleteCardEnvelope, InvestmentsEnvelope, StatementsEnvelope, type DataReader } from './data-reader.js';
import type { CallOptions, DataResult, Exchange, Send, TenantPaths } from './exchange.js';
import { pathId, validated } from './request-checks.js';

export type AccountsDetail = z.infer<typeof AccountsDetailResponse>;
export type AccountsSummary = z.infer<typeof AccountsSummaryResponse>;
export type Investments = z.infer<typeof InvestmentsResponse>;
export type Attributes = z.infer<typeof AttributesResponse>;
export type Statements = z.infer<typeof StatementsResponse>;
export type DeleteCard = z.infer<typeof DeleteCardResponse>;

const ACCOUNTS_DETAIL_READER: DataReader<AccountsDetail> = { envelope: AccountsEnvelope, view: AccountsDetailResponse };
const ACCOUNTS_SUMMARY_READER: DataReader<AccountsSummary> = { envelope: AccountsEnvelope, view: AccountsSummaryResponse };
const INVESTMENTS_READER: DataReader<Investments> = { envelope: InvestmentsEnvelope, view: InvestmentsResponse };
const STATEMENTS_READER: DataReader<Statements> = { envelope: StatementsEnvelope, view: StatementsResponse };
const ATTRIBUTES_READER: DataReader<Attributes> = attributesReader();
const DELETE_CARD_READER: DataReader<DeleteCard> = { envelope: DeleteCardEnvelope, view: DeleteCardResponse };

/** Data endpoints never challenge; a 203 there breaks the contract. */
async function data<T>(send: Send, call: Exchange<T>): Promise<DataResult<T>> {
  const result = await send(call);
  if (result.kind === 'challenge') throw new UnexpectedResponseError(call.operation, 203, 'a data endpoint answered with a challenge');
  return result;
}

/** The session's reads under .../BankingServices: accounts detail and summary (each with its poll), statements. */
export function bankingDataEndpoints(send: Send, { banking, bankingRoute }: TenantPaths) {
  return {
    /** POST .../GetAccountsDetail; usually 202 first, then poll getAccountsDetailAsync. */
    async getAccountsDetail(requestId: string, detailOptions: AccountsDetailOptions = {}, call?: CallOptions): Promise<DataResult<AccountsDetail>> {
      const body = validated(AccountsDetailRequest, { ...detailOptions, RequestId: requestId }, 'GetAccountsDetail');
      return data(send, {
        operation: 'GetAccountsDetail',
        method: 'post',
        path: `${banking}/GetAccountsDetail`,
        route: `${bankingRoute}/GetAccountsDetail`,
        body,
        ready: ACCOUNTS_DETAIL_READER,
        options: call,
      });
    },

    /** GET .../GetAccountsDetailAsync/{requestId}: the poll of a pending accounts detail. */
    async getAccountsDetailAsync(requestId: string, call?: CallOptions): Promise<DataResult<AccountsDetail>> {
      const path = `${banking}/GetAccountsDetailAsync/${pathId(requestId, 'RequestId', 'GetAccountsDetailAsync')}`;
      return data(send, {
        operation: 'GetAccountsDetailAsync',
        method: 'get',
        path,
        route: `${bankingRoute}/GetAccountsDetailAsync/{requestId}`,
        ready: ACCOUNTS_DETAIL_READER,
        options: call,
      });
    },

    async getAccountsSummary(requestId: string, call?: CallOptions): Promise<DataResult<AccountsSummary>> {
      const body = { RequestId: validated(Uuid, requestId, 'GetAccountsSummary RequestId') };
      return data(send, {
        operation: 'GetAccountsSummary',
        method: 'post',
        path: `${banking}/GetAccountsSummary`,
        route: `${bankingRoute}/GetAccountsSummary`,
        body,
        ready: ACCOUNTS_SUMMARY_READER,
        options: call,
      });
    },

    async getAccountsSummaryAsync(requestId: string, call?: CallOptions): Promise<DataResult<AccountsSummary>> {
      const path = `${banking}/GetAccountsSummaryAsync/${pathId(requestId, 'RequestId', 'GetAccountsSummaryAsync')}`;
      return data(send, {
        operation: 'GetAccountsSummaryAsync',
        method: 'get',
        path,
        route: `${bankingRoute}/GetAccountsSummaryAsync/{requestId}`,
        ready: ACCOUNTS_SUMMARY_READER,
        options: call,
      });
    },

    async getStatements(requestId: string, numberOfStatements?: NumberOfStatements, call?: CallOptions): Promise<DataResult<Statements>> {
      const body = validated(
        StatementsRequest,
        { RequestId: requestId, ...(numberOfStatements ? { NumberOfStatements: numberOfStatements } : {}) },
        'GetStatements',
      );
      return data(send, {
        operation: 'GetStatements',
        method: 'post',
        path: `${banking}/GetStatements`,
        route: `${bankingRoute}/GetStatements`,
        body,
        ready: STATEMENTS_READER,
        options: call,
      });
    },
  };
}

/** The reads of a saved login: investments, attributes (a package or a custom set), and DeleteCard, which forgets it. */
export function loginDataEndpoints(send: Send, { tenant, banking, tenantRoute, bankingRoute }: TenantPaths) {
  return {
    /** POST /v3/{customerId}/Investments; repeat the same request while it answers 202. */
    async getInvestments(loginId: string, requestId: string, call?: CallOptions): Promise<DataResult<Investments>> {
      const body = {
        LoginId: validated(Uuid, loginId, 'Investments LoginId'),
        RequestId: validated(Uuid, requestId, 'Investments RequestId'),
        MostRecentCached: true,
      };
      return data(send, {
        operation: 'Investments',
        method: 'post',
        path: `${tenant}/Investments`,
        route: `${tenantRoute}/Investments`,
        body,
        ready: INVESTMENTS_READER,
        options: call,
      });
    },

    /** GET .../insight/login/{loginId}/attributes/{requestId}/{operation}: a fixed package of attributes. */
    async getPackageAttributes(loginId: string, requestId: string, operation: AttributePackageOperation, call?: CallOptions): Promise<DataResult<Attributes>> {
      const op = validated(AttributePackageOperation, operation, 'attributes operation');
      const path = `${tenant}/insight/login/${pathId(loginId, 'LoginId', op)}/attributes/${pathId(requestId, 'RequestId', op)}/${op}`;
      return data(send, {
        operation: op,
        method: 'get',
        path,
        route: `${tenantRoute}/insight/login/{loginId}/attributes/{requestId}/${op}`,
        ready: ATTRIBUTES_READER,
        options: call,
      });
    },

    /** POST .../insight/login/{loginId}/attributes/{requestId}: a custom attribute set. */
    async getCustomAttributes(loginId: string, requestId: string, request: AttributesRequest, call?: CallOptions): Promise<DataResult<Attributes>> {
      const operation = 'CustomAttributes';
      const body = validated(AttributesRequest, request, operation);
      const path = `${tenant}/insight/login/${pathId(loginId, 'LoginId', operation)}/attributes/${pathId(requestId, 'RequestId', operation)}`;
      return data(send, {
        operation,
        method: 'post',
        path,
        route: `${tenantRoute}/insight/login/{loginId}/attributes/{requestId}`,
        body,
        ready: ATTRIBUTES_READER,
        options: call,
      });
    },

    /** DELETE .../DeleteCard/{loginId}: forget the saved login and its data. */
    async deleteCard(loginId: string, call?: CallOptions): Promise<DeleteCard> {
      const path = `${banking}/DeleteCard/${pathId(loginId, 'LoginId', 'DeleteCard')}`;
      const result = await data(send, {
        operation: 'DeleteCard',
        method: 'delete',
        path,
        route: `${bankingRoute}/DeleteCard/{loginId}`,
        ready: DELETE_CARD_READER,
        options: call,
      });
      if (result.kind === 'pending') throw new UnexpectedResponseError('DeleteCard', 202, 'DeleteCard answered pending');
      return result.data;
    },
  };
}

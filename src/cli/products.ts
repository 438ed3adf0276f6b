/**
 * The product flags `start` and `refresh schedule` share (--accounts, --days, --investments,
 * --attributes), their help lines, and the products they ask for.
 */
import { AttributePackageOperation } from '../aggregator/schemas.js';
import type { ConnectionInputArgs } from '../contract/connection/connection-input.js';
import { UsageError } from './args.js';

export const PRODUCT_OPTIONS = {
  accounts: { type: 'boolean' },
  days: { type: 'string' },
  investments: { type: 'boolean' },
  attributes: { type: 'string' },
} as const;

export const PRODUCTS_HELP = `  --accounts            accounts detail with identity, balances and transactions
  --days 90|365         days of transactions (default 90)
  --investments         investments
  --attributes <op>     an attributes package: ${AttributePackageOperation.options.join(', ')}`;

export interface ProductFlags {
  readonly accounts?: boolean | undefined;
  readonly days?: string | undefined;
  readonly investments?: boolean | undefined;
  readonly attributes?: string | undefined;
}

/** The products the flags ask for; none asked: `fallback` if given (a schedule's default), else a usage error. */
export function productsFrom(values: ProductFlags, fallback?: 'accounts'): ConnectionInputArgs['products'] {
  const products: ConnectionInputArgs['products'] = {};
  if (values.days !== undefined && !values.accounts) throw new UsageError('--days applies to --accounts');
  if (values.days !== undefined && values.days !== '90' && values.days !== '365') throw new UsageError('--days must be 90 or 365');
  const accounts = values.accounts || (fallback === 'accounts' && !values.investments && values.attributes === undefined);
  if (accounts) {
    products.accountsDetail = {
      WithAccountIdentity: true,
      WithBalance: true,
      WithTransactions: true,
      DaysOfTransactions: values.days === '365' ? 'Days365' : 'Days90',
    };
  }
  if (values.investments) products.investments = true;
  if (values.attributes !== undefined) {
    const operation = AttributePackageOperation.safeParse(values.attributes);
    if (!operation.success) throw new UsageError(`--attributes must be one of ${AttributePackageOperation.options.join(', ')}`);
    products.attributes = { package: operation.data };
  }
  if (!products.accountsDetail && !products.investments && !products.attributes)
    throw new UsageError('choose at least one product: --accounts, --investments, --attributes <op>');
  return products;
}

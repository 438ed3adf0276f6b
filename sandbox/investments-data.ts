/**
 * Investment accounts generated from a seed (the LoginId): cash, TFSA and RRSP accounts (CAD, and a
 * USD cash account for some logins) holding equities. Invariants the tests check:
 * MarketValue = Quantity x Price (cents), GainAmount = MarketValue - BookValue, GainPercent =
 * GainAmount / BookValue, AccountValue = Cash + sum(MarketValue), CurrencyValue = AccountValue in CAD,
 * top-level Value = sum(CurrencyValue) and Cash = sum(Cash in CAD). Buys have a negative Amount and
 * positive Quantity, sells the opposite; Quantity of a position = bought - sold.
 */
import type { InvestmentAccount, InvestmentTransaction, Position, Security } from './spec-shapes.js';
import { dayOf, isoOf } from './dates.js';
import { Prng, cents, uuidFrom } from './random.js';

/** Fixed conversion used for CurrencyValue and the top-level sums. */
const USD_TO_CAD = 1.385;

interface Listing {
  readonly Name: string;
  readonly Symbol: string;
  readonly Currency: 'CAD' | 'USD';
  readonly CUSIP: string;
  readonly ISIN: string | null;
  readonly basePrice: number;
}

const LISTINGS: readonly Listing[] = [
  { Name: 'Royal Bank of Canada', Symbol: 'RY', Currency: 'CAD', CUSIP: '780087102', ISIN: 'CA7800871021', basePrice: 168 },
  { Name: 'Canadian National Railway', Symbol: 'CNR', Currency: 'CAD', CUSIP: '136375102', ISIN: 'CA1363751027', basePrice: 151 },
  { Name: 'Shopify Inc.', Symbol: 'SHOP', Currency: 'CAD', CUSIP: '82509L107', ISIN: 'CA82509L1076', basePrice: 205 },
  { Name: 'Enbridge Inc.', Symbol: 'ENB', Currency: 'CAD', CUSIP: '29250N105', ISIN: 'CA29250N1050', basePrice: 64 },
  { Name: 'Vanguard S&P 500 Index ETF', Symbol: 'VFV', Currency: 'CAD', CUSIP: '92206C201', ISIN: null, basePrice: 152 },
  { Name: 'iShares Core Canadian Universe Bond ETF', Symbol: 'XBB', Currency: 'CAD', CUSIP: '46428D108', ISIN: 'CA46428D1087', basePrice: 28 },
  { Name: 'Apple Inc.', Symbol: 'AAPL', Currency: 'USD', CUSIP: '037833100', ISIN: 'US0378331005', basePrice: 231 },
  { Name: 'Microsoft Corporation', Symbol: 'MSFT', Currency: 'USD', CUSIP: '594918104', ISIN: 'US5949181045', basePrice: 512 },
  { Name: 'Johnson & Johnson', Symbol: 'JNJ', Currency: 'USD', CUSIP: '478160104', ISIN: 'US4781601046', basePrice: 178 },
];

export interface InvestmentData {
  readonly Accounts: InvestmentAccount[];
  readonly Securities: Security[];
  readonly Value: number;
  readonly Cash: number;
}

const toCad = (amount: number, currency: string) => (currency === 'USD' ? cents(amount * USD_TO_CAD) : amount);

/** Generates the investment accounts of one login; pure in (seed, asOf). */
export function generateInvestmentData(seed: string, asOf: string): InvestmentData {
  const prng = new Prng(`invest:${seed}`);
  const end = dayOf(asOf);
  // Prices are per login so two logins differ, and fixed at asOf (the Security.Date).
  const securities = new Map<string, Security>();
  const securityOf = (listing: Listing): Security => {
    let security = securities.get(listing.Symbol);
    if (!security) {
      security = {
        Id: uuidFrom(`security:${listing.Symbol}`),
        Name: listing.Name,
        Symbol: listing.Symbol,
        Type: 'equity',
        Price: cents(listing.basePrice * (0.9 + prng.next() * 0.2)),
        Date: `${asOf}T20:00:00.000Z`,
        Aliases: [`${listing.Symbol}${listing.Currency === 'CAD' ? '.TO' : ''}`, listing.Name.toUpperCase()],
        Currency: listing.Currency,
        CUSIP: listing.CUSIP,
        ISIN: listing.ISIN,
      };
      securities.set(listing.Symbol, security);
    }
    return security;
  };

  const plans: { type: string; name: string; currency: 'CAD' | 'USD'; registered: boolean }[] = [
    { type: 'cash', name: 'Cash Account', currency: 'CAD', registered: false },
    { type: 'tfsa', name: 'Tax-Free Savings Account', currency: 'CAD', registered: true },
    { type: 'rrsp', name: 'Registered Retirement Savings Plan', currency: 'CAD', registered: true },
  ];
  if (prng.chance(0.6)) plans.push({ type: 'cash', name: 'US Cash Account', currency: 'USD', registered: false });

  const accountNumberBase = prng.digits(6);
  const accounts: InvestmentAccount[] = plans.map((plan, index) => {
    const accountId = `${accountNumberBase}${index}`;
    const candidates = LISTINGS.filter((listing) => listing.Currency === plan.currency);
    const held = candidates.filter(() => prng.chance(0.55)).slice(0, 4);
    if (held.length === 0) held.push(prng.pick(candidates));
    const positions: Position[] = [];
    const transactions: InvestmentTransaction[] = [];
    for (const listing of held) {
      const security = securityOf(listing);
      // One to three buys over the year, sometimes a partial sell; BookValue is the average cost.
      let bought = 0;
      let cost = 0;
      const buys = prng.int(1, 3);
      for (let b = 0; b < buys; b++) {
        const quantity = prng.int(5, 60);
        const price = cents(security.Price * (0.75 + prng.next() * 0.35));
        const fee = prng.pick([0, 4.95, 9.99]);
        bought += quantity;
        cost += quantity * price;
        transactions.push({
          Id: prng.uuid(),
          Date: isoOf(end - prng.int(30, 360)),
          Type: 'buy',
          Description: `BUY ${quantity} ${listing.Symbol} @ ${price}`,
          Quantity: quantity,
          Fee: fee,
          Amount: -cents(quantity * price + fee),
          SecurityId: security.Id,
        });
      }
      let quantity = bought;
      if (bought > 10 && prng.chance(0.35)) {
        const sold = prng.int(1, Math.floor(bought / 2));
        const price = cents(security.Price * (0.9 + prng.next() * 0.15));
        const fee = prng.pick([0, 4.95, 9.99]);
        quantity -= sold;
        transactions.push({
          Id: prng.uuid(),
          Date: isoOf(end - prng.int(1, 29)),
          Type: 'sell',
          Description: `SELL ${sold} ${listing.Symbol} @ ${price}`,
          Quantity: -sold,
          Fee: fee,
          Amount: cents(sold * price - fee),
          SecurityId: security.Id,
        });
      }
      const bookValue = cents((cost / bought) * quantity);
      const marketValue = cents(quantity * security.Price);
      const gain = cents(marketValue - bookValue);
      positions.push({
        Id: uuidFrom(`${seed}:position:${accountId}:${listing.Symbol}`),
        Category: 'Equity',
        Class: 'equity',
        BookValue: bookValue,
        Quantity: quantity,
        MarketValue: marketValue,
        GainAmount: gain,
        GainCurrencyAmount: gain,
        GainPercent: gain / bookValue,
        Currency: plan.currency,
        SecurityId: security.Id,
      });
    }
    transactions.sort((a, b) => (a.Date < b.Date ? 1 : a.Date > b.Date ? -1 : 0));
    const cash = prng.amount(0, 4000);
    const accountValue = cents(cash + positions.reduce((sum, position) => sum + position.MarketValue, 0));
    return {
      Id: uuidFrom(`${seed}:investment:${accountId}`),
      FullAccountId: `${plan.type.toUpperCase()}-${plan.currency}-${accountId}`,
      AccountId: accountId,
      Name: plan.name,
      Type: plan.type,
      Registered: plan.registered,
      Currency: plan.currency,
      Cash: cash,
      AccountValue: accountValue,
      CurrencyValue: toCad(accountValue, plan.currency),
      Positions: positions,
      Transactions: transactions,
    };
  });
  return {
    Accounts: accounts,
    Securities: [...securities.values()],
    Value: cents(accounts.reduce((sum, account) => sum + account.CurrencyValue, 0)),
    Cash: cents(accounts.reduce((sum, account) => sum + toCad(account.Cash, account.Currency), 0)),
  };
}

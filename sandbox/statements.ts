/**
 * Monthly statements for GetStatements: one small, valid PDF per account and month, listing the
 * month's closing balance from the same generated transactions.
 */
import type { NumberOfStatements, Statement } from '../src/aggregator/schemas.js';
import type { GeneratedAccount } from './banking-data.js';
import { uuidFrom } from './random.js';

const MONTHS: Record<NumberOfStatements, number> = { MostRecent: 1, Months3: 3, Months12: 12 };

/** Statements of the last complete months before asOf, newest first. */
export function statementsFor(account: GeneratedAccount, asOf: string, which: NumberOfStatements = 'MostRecent'): Statement[] {
  const [year = 2026, month = 1] = asOf.split('-').map(Number);
  const out: Statement[] = [];
  for (let back = 1; back <= MONTHS[which]; back++) {
    const index = year * 12 + (month - 1) - back;
    const period = `${Math.floor(index / 12)}-${String((index % 12) + 1).padStart(2, '0')}`;
    const inPeriod = account.Transactions.filter((t) => t.Date.startsWith(period));
    const closing = inPeriod[0]?.Balance ?? null;
    const text = `Statement ${period} account ${account.AccountNumber} ${account.Title}: ${inPeriod.length} transactions, closing balance ${closing ?? 'n/a'} ${account.Currency}`;
    out.push({ UniqueId: uuidFrom(`statement:${account.Id}:${period}`), FileType: 'PDF', Base64Bytes: Buffer.from(minimalPdf(text)).toString('base64') });
  }
  return out;
}

/** A one-page PDF with one line of text (valid xref offsets). */
function minimalPdf(text: string): string {
  const safe = text.replace(/[()\\]/g, '');
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${safe.length + 31} >>\nstream\nBT /F1 10 Tf 40 740 Td (${safe}) Tj ET\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let pdf = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(pdf.length);
    pdf += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = pdf.length;
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return pdf;
}

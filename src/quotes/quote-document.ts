import { minorUnits } from '../pricing/currencies.ts';
import { MAX_PRICE_DECIMALS } from '../pricing/money.ts';
import type { QuoteRow } from './quote-records.repository.ts';
import type { SavedQuoteLine } from './quote-records.schemas.ts';
import { statusAt } from './quote-records.service.ts';

/**
 * What a quote's document shows, every text already formatted: the HTML page and the PDF are two renderers of this
 * one model, so they cannot disagree. Made from the quote's own row alone (its lines carry their names), never
 * from the catalogue, so an open quote's document never changes.
 */
export interface QuoteDocumentModel {
  /** "Quote Q-000042, version 2". */
  heading: string;
  fileName: string;
  /** Shown across the document until the quote is finalized. */
  draft: boolean;
  status: string;
  title: string | null;
  customer: string[];
  /** Label and value pairs: dates, currency. */
  facts: { label: string; value: string }[];
  groups: DocumentBundle[];
  totals: { label: string; value: string; strong: boolean }[];
  notes: string | null;
}

export interface DocumentBundle {
  name: string;
  productId: string;
  options: { name: string; lines: DocumentLine[] }[];
}

export interface DocumentLine {
  product: string;
  /** The CRM product id, shown under a product that has a name. */
  productId: string | null;
  quantity: string;
  unitPrice: string;
  discount: string;
  total: string;
}

const statusNames: Record<string, string> = {
  draft: 'Draft',
  pending_approval: 'Pending approval',
  approved: 'Approved',
  open: 'Open',
  accepted: 'Accepted',
  declined: 'Declined',
  canceled: 'Canceled',
  superseded: 'Superseded',
  expired: 'Expired',
};

const dates = new Intl.DateTimeFormat('en-GB', { dateStyle: 'long', timeZone: 'UTC' });
const quantities = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const percents = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });

/** Amounts in the currency's format, exact: Intl formats the decimal text as it is, not a binary double. */
function moneyFormats(currency: string) {
  const places = minorUnits(currency);
  const options = { style: 'currency', currency, currencyDisplay: 'symbol' } as const;
  const total = new Intl.NumberFormat('en-US', {
    ...options,
    minimumFractionDigits: places,
    maximumFractionDigits: places,
  });
  const unit = new Intl.NumberFormat('en-US', {
    ...options,
    minimumFractionDigits: places,
    maximumFractionDigits: Math.max(places, MAX_PRICE_DECIMALS),
  });
  // Intl.NumberFormat takes a decimal string exactly (ECMA-402 "exact decimal"); the types say number only.
  const exact = (format: Intl.NumberFormat) => (amount: string | number) =>
    format.format(String(amount) as unknown as number);
  return { total: exact(total), unit: exact(unit) };
}

function groupLines(lines: SavedQuoteLine[], money: ReturnType<typeof moneyFormats>): DocumentBundle[] {
  const groups: (DocumentBundle & { index: number })[] = [];
  for (const line of lines) {
    let group = groups.at(-1);
    if (group?.index !== line.bundleIndex) {
      group = { index: line.bundleIndex, name: line.bundleName, productId: line.bundleId, options: [] };
      groups.push(group);
    }
    let option = group.options.find((o) => o.name === line.optionName);
    if (option === undefined) {
      option = { name: line.optionName, lines: [] };
      group.options.push(option);
    }
    option.lines.push({
      product: line.productName ?? line.productId,
      productId: line.productName === null ? null : line.productId,
      quantity: quantities.format(line.quantity),
      unitPrice: money.unit(line.unitPrice),
      discount: line.discountPercent === 0 ? '' : `${percents.format(line.discountPercent)}%`,
      total: money.total(line.total),
    });
  }
  return groups.map(({ index: _, ...group }) => group);
}

export function quoteDocumentModel(row: QuoteRow, now: string): QuoteDocumentModel {
  const money = moneyFormats(row.currency);
  const status = statusAt(row, now);
  const when = (value: string | null) => (value === null ? null : dates.format(new Date(value)));
  const facts = [
    { label: 'Status', value: statusNames[status] ?? status },
    { label: 'Date', value: when(row.finalized_at ?? row.updated_at) },
    { label: 'Valid until', value: when(row.expires_at) },
    { label: 'Accepted', value: when(row.accepted_at) },
    { label: 'Currency', value: row.currency },
  ].filter((fact): fact is { label: string; value: string } => fact.value !== null);
  const customer = [
    row.customer_name,
    row.customer_id && `Customer ${row.customer_id}`,
    row.customer_email,
  ].filter((text): text is string => typeof text === 'string' && text !== '');
  const discount = Number(row.discount_total);
  const heading = `Quote ${row.number}, version ${row.version}`;
  return {
    heading,
    fileName: `${row.number}-v${row.version}`,
    draft: row.finalized_at === null,
    status,
    title: row.title,
    customer,
    facts,
    groups: groupLines(JSON.parse(row.lines_json) as SavedQuoteLine[], money),
    totals: [
      { label: 'List total', value: money.total(row.list_total), strong: false },
      ...(discount === 0
        ? []
        : [
            {
              label: discount > 0 ? 'Discounts' : 'Price changes',
              value:
                discount > 0
                  ? money.total(`-${row.discount_total}`)
                  : `+${money.total(row.discount_total.slice(1))}`,
              strong: false,
            },
          ]),
      { label: 'Total', value: money.total(row.total), strong: true },
    ],
    notes: row.notes,
  };
}

import type { DocumentLine, QuoteDocumentModel } from './quote-document.ts';

const escapes: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text made safe for HTML content and attribute values: every text of a quote may have come from a user. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => escapes[c] as string);
}

// Its own styles, no script, no font or image from anywhere: the page prints as it shows, offline.
const styles = `
  @page { size: A4; margin: 18mm 16mm; }
  * { box-sizing: border-box; }
  body { font: 10.5pt/1.45 "DejaVu Sans", "Helvetica Neue", Arial, sans-serif; color: #1d2430; margin: 0;
    padding: 32px; max-width: 920px; margin-inline: auto; position: relative; }
  header { display: flex; justify-content: space-between; gap: 24px; flex-wrap: wrap;
    border-bottom: 2px solid #1d2430; padding-bottom: 14px; margin-bottom: 18px; }
  h1 { font-size: 20pt; margin: 0 0 4px; }
  .title { font-size: 12pt; color: #4a5566; margin: 0; }
  dl { display: grid; grid-template-columns: auto auto; gap: 2px 14px; margin: 0; font-size: 9.5pt; }
  dt { color: #6b7585; } dd { margin: 0; text-align: right; }
  .customer { margin: 0 0 18px; } .customer h2 { font-size: 9pt; text-transform: uppercase;
    letter-spacing: .08em; color: #6b7585; margin: 0 0 4px; } .customer p { margin: 0; }
  .draft-banner { border: 2px solid #b42318; color: #b42318; font-weight: bold; text-align: center;
    letter-spacing: .2em; padding: 6px; margin-bottom: 16px; }
  .watermark { position: fixed; inset: 0; display: flex; align-items: center; justify-content: center;
    pointer-events: none; font-size: 120pt; font-weight: bold; color: rgba(180, 35, 24, .08);
    transform: rotate(-30deg); z-index: 0; }
  table { width: 100%; border-collapse: collapse; margin-bottom: 14px; position: relative; z-index: 1; }
  caption { text-align: left; font-weight: bold; font-size: 12pt; padding: 6px 0; }
  caption small { font-weight: normal; color: #6b7585; font-size: 9pt; margin-left: 6px; }
  th, td { padding: 5px 6px; border-bottom: 1px solid #d9dee5; vertical-align: top; }
  thead th { font-size: 8.5pt; text-transform: uppercase; letter-spacing: .05em; color: #6b7585;
    border-bottom: 1px solid #1d2430; text-align: left; }
  .option th { text-align: left; background: #f2f4f7; font-size: 9.5pt; }
  .num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
  td small { display: block; color: #6b7585; font-size: 8.5pt; }
  .totals { margin-left: auto; width: 320px; }
  .totals td { border: 0; padding: 3px 6px; } .totals .strong td { font-weight: bold; font-size: 12pt;
    border-top: 2px solid #1d2430; padding-top: 6px; }
  .notes { white-space: pre-wrap; border-top: 1px solid #d9dee5; padding-top: 10px; margin-top: 18px; }
  td:first-child { overflow-wrap: anywhere; }
  @media (max-width: 600px) { body { padding: 14px; font-size: 9.5pt; } th, td { padding: 4px 3px; }
    thead th { font-size: 7pt; letter-spacing: 0; } h1 { font-size: 16pt; } .totals { width: 100%; } }
  @media print { body { padding: 0; } .watermark { position: fixed; } thead { display: table-header-group; }
    tr { break-inside: avoid; } }
`;

function lineRow(line: DocumentLine): string {
  const id = line.productId === null ? '' : `<small>${escapeHtml(line.productId)}</small>`;
  return (
    `<tr><td>${escapeHtml(line.product)}${id}</td><td class="num">${escapeHtml(line.quantity)}</td>` +
    `<td class="num">${escapeHtml(line.unitPrice)}</td><td class="num">${escapeHtml(line.discount)}</td>` +
    `<td class="num">${escapeHtml(line.total)}</td></tr>`
  );
}

/** The quote as one self-contained printable HTML page. */
export function renderQuoteHtml(model: QuoteDocumentModel): string {
  const e = escapeHtml;
  const facts = model.facts.map((f) => `<dt>${e(f.label)}</dt><dd>${e(f.value)}</dd>`).join('');
  const customer =
    model.customer.length === 0
      ? ''
      : `<section class="customer"><h2>Prepared for</h2>${model.customer.map((c) => `<p>${e(c)}</p>`).join('')}</section>`;
  const bundles = model.groups
    .map((group) => {
      const options = group.options
        .map(
          (o) => `<tr class="option"><th colspan="5">${e(o.name)}</th></tr>${o.lines.map(lineRow).join('')}`,
        )
        .join('');
      const code = group.name === group.productId ? '' : `<small>${e(group.productId)}</small>`;
      return (
        `<table><caption>${e(group.name)}${code}</caption><thead><tr><th>Product</th><th class="num">Qty</th>` +
        `<th class="num">Unit price</th><th class="num">Discount</th><th class="num">Total</th></tr></thead>` +
        `<tbody>${options}</tbody></table>`
      );
    })
    .join('');
  const totals = model.totals
    .map(
      (t) =>
        `<tr${t.strong ? ' class="strong"' : ''}><td>${e(t.label)}</td><td class="num">${e(t.value)}</td></tr>`,
    )
    .join('');
  const draft = model.draft
    ? '<div class="watermark" aria-hidden="true">DRAFT</div><div class="draft-banner">DRAFT: not a binding offer until finalized</div>'
    : '';
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<title>${e(model.heading)}${model.draft ? ' (draft)' : ''}</title><style>${styles}</style></head><body>` +
    draft +
    `<header><div><h1>${e(model.heading)}</h1>${model.title === null ? '' : `<p class="title">${e(model.title)}</p>`}</div>` +
    `<dl>${facts}</dl></header>${customer}<main>${bundles}` +
    `<table class="totals"><tbody>${totals}</tbody></table>` +
    `${model.notes === null ? '' : `<section class="notes">${e(model.notes)}</section>`}</main></body></html>`
  );
}

// A price book's prices changed in bulk: by a percent, or by a CSV file edited in a spreadsheet. Each is previewed
// first (a dry run of the very request), then applied under the ETag of the preview, so what is applied is exactly
// what was shown, or nothing when someone changed the book in between.
import type { Schemas } from '@cpq/client';
import { useState } from 'preact/hooks';
import { finerThanCurrency, money } from '../format.ts';
import { call, type Problem, ProblemError, problemOf, type Session } from '../session.ts';
import { Field, ProblemBanner, parseNumber } from '../ui.tsx';
import { checkedLocally } from './conflict.tsx';

type Change = Schemas['PriceChange'];
type BulkField = Schemas['BulkChangeBody']['fields'][number];

const fieldLabels: Record<BulkField, string> = {
  standardPrice: 'Standard prices',
  listPrice: 'List prices',
  adjustments: 'Amounts in adjustments (fixed prices, tiers, values)',
};

interface Preview {
  kind: 'bulk' | 'csv';
  changes: Change[];
  summary: Schemas['PriceChangePlan']['summary'];
  etag: string | null;
  /** What to send again to apply it. */
  apply: (etag: string | null) => Promise<{ changes: Change[] }>;
}

function amount(value: number | null | undefined, currency: string): string {
  if (value === null || value === undefined) return 'none';
  const finer = finerThanCurrency(value, currency);
  return finer ? `${money(value, currency)} (${finer})` : money(value, currency);
}

/** Every amount of an adjustment, in order, to show how they move. */
function adjustmentAmounts(adjustment: Change['after']['adjustment']): number[] {
  if (!adjustment) return [];
  switch (adjustment.type) {
    case 'override':
      return [adjustment.amount];
    case 'percent':
      return [];
    case 'volume':
      return adjustment.tiers.map((t) => t.unitPrice);
    default:
      return adjustment.values.map((v) => v.unitPrice);
  }
}

/** What a change does, in words: "list price $25.00 → $25.75". */
export function changeWords(change: Change): string[] {
  const { currency, before, after } = change;
  const lines: string[] = [];
  const labels = { standardPrice: 'standard price', listPrice: 'list price' } as const;
  for (const field of ['standardPrice', 'listPrice'] as const) {
    if ((before?.[field] ?? null) !== after[field]) {
      lines.push(`${labels[field]} ${amount(before?.[field], currency)} → ${amount(after[field], currency)}`);
    }
  }
  if (JSON.stringify(before?.adjustment ?? null) !== JSON.stringify(after.adjustment)) {
    const was = adjustmentAmounts(before?.adjustment ?? null);
    const now = adjustmentAmounts(after.adjustment);
    lines.push(
      was.length > 0 && now.length === was.length
        ? `adjustment ${was.map((a) => money(a, currency)).join(', ')} → ${now.map((a) => money(a, currency)).join(', ')}`
        : after.adjustment
          ? `adjustment set (${after.adjustment.type})`
          : 'adjustment removed',
    );
  }
  if ((before?.allowUnitPriceEditing ?? false) !== after.allowUnitPriceEditing) {
    lines.push(
      after.allowUnitPriceEditing ? 'reps may edit the unit price' : 'reps may no longer edit the unit price',
    );
  }
  return lines;
}

function ChangesTable({ preview, nameOf }: { preview: Preview; nameOf: (productId: string) => string }) {
  const { changes, summary } = preview;
  return (
    <div class="preview" data-preview={preview.kind}>
      <p aria-live="polite">
        {summary.changed === 0
          ? `Nothing would change: all ${summary.unchanged} prices are already as asked.`
          : `${summary.changed} ${summary.changed === 1 ? 'price changes' : 'prices change'}` +
            (summary.unchanged > 0 ? `; ${summary.unchanged} stay as they are.` : '.')}
      </p>
      {changes.length > 0 && (
        <div class="table-wrap">
          <table class="changes">
            <caption class="visually-hidden">Prices that change</caption>
            <thead>
              <tr>
                {preview.kind === 'csv' && <th scope="col">Line</th>}
                <th scope="col">Product</th>
                <th scope="col">Currency</th>
                <th scope="col">Change</th>
              </tr>
            </thead>
            <tbody>
              {changes.map((change) => (
                <tr key={`${change.productId} ${change.currency}`} data-product={change.productId}>
                  {preview.kind === 'csv' && <td>{change.line}</td>}
                  <th scope="row">{nameOf(change.productId)}</th>
                  <td>{change.currency}</td>
                  <td>
                    {change.action === 'create' && <span class="badge">new</span>}{' '}
                    {changeWords(change).join('; ')}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

/** Sends the CSV as it is: the typed client would write a string body as JSON. */
const asText = (body: unknown) => body as string;

export function PriceBookTools({
  session,
  priceBookId,
  optionName,
  currencies,
  nameOf,
  onChanged,
  onClose,
}: {
  session: Session;
  priceBookId: string;
  optionName: string;
  currencies: string[];
  nameOf: (productId: string) => string;
  onChanged: () => void;
  onClose: () => void;
}) {
  const [percent, setPercent] = useState('');
  const [chosenCurrencies, setChosenCurrencies] = useState<string[]>(currencies);
  const [fields, setFields] = useState<BulkField[]>(['listPrice', 'standardPrice']);
  const [csv, setCsv] = useState<{ name: string; text: string } | null>(null);
  const [preview, setPreview] = useState<Preview | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  // Which form the problem or the preview belongs to: each shows under its own form.
  const [about, setAbout] = useState<Preview['kind']>('bulk');
  const [done, setDone] = useState('');
  const [busy, setBusy] = useState(false);
  const path = { priceBookId };

  const run = async (kind: Preview['kind'], work: () => Promise<void>) => {
    setAbout(kind);
    setBusy(true);
    setDone('');
    try {
      await work();
      setProblem(null);
    } catch (error) {
      setPreview(null);
      setProblem(problemOf(error));
    } finally {
      setBusy(false);
    }
  };

  const bulk = (dryRun: boolean, etag: string | null, value: number) =>
    call(
      session.api.POST('/v1/pricebooks/{priceBookId}/prices/bulk-change', {
        params: { path, header: etag ? { 'if-match': etag } : {} },
        body: {
          percent: value,
          fields,
          currencies: chosenCurrencies as NonNullable<Schemas['BulkChangeBody']['currencies']>,
          dryRun,
        },
      }),
    );

  const previewBulk = (event: Event) => {
    event.preventDefault();
    const value = parseNumber(percent);
    const local: Schemas['ProblemItem'][] = [];
    if (value === null || Number.isNaN(value)) {
      local.push({
        code: 'invalid_type',
        in: 'body',
        pointer: '/percent',
        message: 'write a percent, such as 3 or -2.5',
      });
    }
    if (fields.length === 0)
      local.push({ code: 'required', in: 'body', pointer: '/fields', message: 'choose at least one' });
    if (chosenCurrencies.length === 0) {
      local.push({ code: 'required', in: 'body', pointer: '/currencies', message: 'choose at least one' });
    }
    if (local.length > 0) {
      setPreview(null);
      setAbout('bulk');
      setProblem(checkedLocally(local));
      return;
    }
    return run('bulk', async () => {
      const { data, etag } = await bulk(true, null, value as number);
      setPreview({
        kind: 'bulk',
        changes: data.changes,
        summary: data.summary,
        etag,
        apply: async (tag) => (await bulk(false, tag, value as number)).data,
      });
    });
  };

  const importCsv = (dryRun: boolean, etag: string | null, text: string) =>
    call(
      session.api.PUT('/v1/pricebooks/{priceBookId}/prices', {
        params: { path, query: { dryRun }, header: etag ? { 'if-match': etag } : {} },
        body: text as never,
        bodySerializer: asText,
        headers: { 'content-type': 'text/csv' },
      }),
    );

  const previewCsv = (event: Event) => {
    event.preventDefault();
    if (csv === null) {
      setAbout('csv');
      setProblem(
        checkedLocally([
          { code: 'required', in: 'body', pointer: '/file', message: 'choose a CSV file first' },
        ]),
      );
      return;
    }
    return run('csv', async () => {
      const { data, etag } = await importCsv(true, null, csv.text);
      setPreview({
        kind: 'csv',
        changes: data.changes ?? [],
        summary: data.summary ?? { rows: 0, changed: 0, unchanged: 0 },
        etag,
        apply: async (tag) => ({ changes: (await importCsv(false, tag, csv.text)).data.changes ?? [] }),
      });
    });
  };

  const apply = () =>
    run(about, async () => {
      if (preview === null) return;
      try {
        const { changes } = await preview.apply(preview.etag);
        setPreview(null);
        setDone(`Applied: ${changes.length} ${changes.length === 1 ? 'price' : 'prices'} changed.`);
        onChanged();
      } catch (error) {
        const found = problemOf(error);
        if (found.status !== 412) throw error;
        throw new ProblemError({
          ...found,
          detail:
            'Prices of this book changed after the preview. Preview again to see what would change now.',
        });
      }
    });

  const download = () =>
    run('csv', async () => {
      const { data } = await call(
        session.api.GET('/v1/pricebooks/{priceBookId}/prices', {
          params: { path },
          headers: { accept: 'text/csv' },
          parseAs: 'text',
        }),
      );
      const link = document.createElement('a');
      link.href = URL.createObjectURL(new Blob([data as unknown as string], { type: 'text/csv' }));
      link.download = `${optionName} prices.csv`;
      link.click();
      URL.revokeObjectURL(link.href);
      setDone(`Downloaded ${link.download}.`);
    });

  const outcome = (kind: Preview['kind']) =>
    about === kind && (
      <>
        <ProblemBanner problem={problem} fields={local} />
        {preview && (
          <>
            <ChangesTable preview={preview} nameOf={nameOf} />
            <div class="actions">
              <button type="button" onClick={apply} disabled={busy || preview.changes.length === 0}>
                {preview.kind === 'bulk' ? 'Apply the change' : 'Import the file'}
              </button>
              <button type="button" class="secondary" onClick={() => setPreview(null)}>
                Discard the preview
              </button>
            </div>
          </>
        )}
        <p class="status" aria-live="polite">
          {done}
        </p>
      </>
    );
  const toggle = <T,>(list: T[], value: T, on: boolean) =>
    on ? [...list, value] : list.filter((v) => v !== value);
  const local = ['/percent', '/fields', '/currencies', '/file'];
  return (
    <section class="editor price-book-tools" aria-label={`Change the prices of ${optionName}`}>
      <h3>Change the prices of {optionName}</h3>
      <form onSubmit={previewBulk} class="bulk">
        <h4>By a percent</h4>
        <Field
          label="Percent (negative lowers)"
          pointer="/percent"
          problem={problem}
          hint="Rounded to each currency's smallest unit (cents); finer prices keep their decimals."
        >
          {(props) => (
            <input
              {...props}
              inputMode="decimal"
              value={percent}
              onInput={(e) => setPercent(e.currentTarget.value)}
            />
          )}
        </Field>
        <fieldset data-pointer="/fields">
          <legend>Which prices</legend>
          {(Object.keys(fieldLabels) as BulkField[]).map((field) => (
            <label key={field} class="check">
              <input
                type="checkbox"
                checked={fields.includes(field)}
                onChange={(e) => setFields(toggle(fields, field, e.currentTarget.checked))}
              />{' '}
              {fieldLabels[field]}
            </label>
          ))}
        </fieldset>
        {currencies.length > 1 && (
          <fieldset data-pointer="/currencies">
            <legend>Currencies</legend>
            {currencies.map((currency) => (
              <label key={currency} class="check">
                <input
                  type="checkbox"
                  checked={chosenCurrencies.includes(currency)}
                  onChange={(e) =>
                    setChosenCurrencies(toggle(chosenCurrencies, currency, e.currentTarget.checked))
                  }
                />{' '}
                {currency}
              </label>
            ))}
          </fieldset>
        )}
        <div class="actions">
          <button type="submit" disabled={busy}>
            Preview the change
          </button>
        </div>
      </form>
      {outcome('bulk')}
      <form onSubmit={previewCsv} class="csv">
        <h4>With a spreadsheet (CSV)</h4>
        <p class="muted small">
          Download the prices, edit them, and import the file: rows you leave out stay as they are.
        </p>
        <div class="actions">
          <button type="button" class="secondary" onClick={download} disabled={busy}>
            Download CSV
          </button>
        </div>
        <Field label="CSV file to import" pointer="/file" problem={problem}>
          {(props) => (
            <input
              {...props}
              type="file"
              accept=".csv,text/csv"
              onChange={async (e) => {
                const file = e.currentTarget.files?.[0];
                setPreview(null);
                setCsv(file ? { name: file.name, text: await file.text() } : null);
              }}
            />
          )}
        </Field>
        <div class="actions">
          <button type="submit" disabled={busy}>
            Preview the import
          </button>
        </div>
      </form>
      {outcome('csv')}
      <div class="actions">
        <button type="button" class="secondary" onClick={onClose}>
          Close
        </button>
      </div>
    </section>
  );
}

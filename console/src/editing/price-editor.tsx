// The prices and adjustments of one product in its option's price book, every currency at once, written with one
// PUT under the If-Match of the book as read.
import type { Schemas } from '@cpq/client';
import { useEffect, useState } from 'preact/hooks';
import { adjustmentText, money } from '../format.ts';
import { call, type Problem, problemOf, type Session } from '../session.ts';
import { Field, Loading, numberText, ProblemBanner, parseNumber } from '../ui.tsx';
import { Conflict, checkedLocally, FormEnd } from './conflict.tsx';

type Adjustment = Schemas['PriceAdjustment'];
type AdjustmentType = Adjustment['type'];
type ProblemItem = Schemas['ProblemItem'];

interface ItemColumn {
  name: string;
  label: string;
  kind: 'number' | 'optional-number' | 'text';
}

const itemColumns: Record<'volume' | 'enum' | 'range' | 'variant', ItemColumn[]> = {
  volume: [
    { name: 'firstUnit', label: 'From unit', kind: 'number' },
    { name: 'lastUnit', label: 'To unit (empty: no limit)', kind: 'optional-number' },
    { name: 'unitPrice', label: 'Unit price', kind: 'number' },
  ],
  enum: [
    { name: 'value', label: 'Property value', kind: 'text' },
    { name: 'unitPrice', label: 'Unit price', kind: 'number' },
  ],
  range: [
    { name: 'firstUnit', label: 'From value', kind: 'number' },
    { name: 'lastUnit', label: 'To value', kind: 'number' },
    { name: 'unitPrice', label: 'Unit price', kind: 'number' },
  ],
  variant: [
    { name: 'value', label: 'Variant id', kind: 'text' },
    { name: 'unitPrice', label: 'Unit price', kind: 'number' },
  ],
};

const adjustmentLabels: Record<AdjustmentType, string> = {
  override: 'Fixed unit price',
  percent: 'Percent off',
  volume: 'Volume tiers',
  enum: 'By property value',
  range: 'By numeric property range',
  variant: 'By variant',
};

interface PriceRow {
  currency: string;
  existed: boolean;
  standardPrice: string;
  listPrice: string;
  type: AdjustmentType | '';
  amount: string;
  property: string;
  items: Record<string, string>[];
}

function rowOf(currency: string, prices: Schemas['CurrencyPrices'] | undefined): PriceRow {
  const adjustment = prices?.adjustment ?? null;
  const row: PriceRow = {
    currency,
    existed: prices !== undefined,
    standardPrice: numberText(prices?.standardPrice),
    listPrice: numberText(prices?.listPrice),
    type: adjustment?.type ?? '',
    amount: '',
    property: '',
    items: [],
  };
  if (adjustment === null) return row;
  switch (adjustment.type) {
    case 'override':
    case 'percent':
      row.amount = String(adjustment.amount);
      break;
    case 'volume':
      row.items = adjustment.tiers.map((t) => ({
        firstUnit: String(t.firstUnit),
        lastUnit: numberText(t.lastUnit),
        unitPrice: String(t.unitPrice),
      }));
      break;
    case 'enum':
      row.property = adjustment.property;
      row.items = adjustment.values.map((v) => ({ value: v.value, unitPrice: String(v.unitPrice) }));
      break;
    case 'range':
      row.property = adjustment.property;
      row.items = adjustment.values.map((v) => ({
        firstUnit: String(v.firstUnit),
        lastUnit: String(v.lastUnit),
        unitPrice: String(v.unitPrice),
      }));
      break;
    case 'variant':
      row.items = adjustment.values.map((v) => ({ value: v.value, unitPrice: String(v.unitPrice) }));
      break;
  }
  return row;
}

function hasValues(row: PriceRow): boolean {
  return row.existed || row.standardPrice.trim() !== '' || row.listPrice.trim() !== '' || row.type !== '';
}

/** The PUT body of the rows that have anything to write, and which row each element came from. */
function pricesBody(
  productId: string,
  rows: PriceRow[],
  allowUnitPriceEditing: boolean,
): { body: Schemas['PriceWrite'][]; sent: number[]; local: ProblemItem[] } {
  const local: ProblemItem[] = [];
  const sent: number[] = [];
  const body: Schemas['PriceWrite'][] = [];
  rows.forEach((row, r) => {
    if (!hasValues(row)) return;
    const at = `/${body.length}`;
    const number = (text: string, pointer: string): number | null => {
      const value = parseNumber(text);
      if (Number.isNaN(value))
        local.push({ code: 'invalid_type', in: 'body', pointer, message: 'must be a number' });
      return value;
    };
    const standardPrice = number(row.standardPrice, `${at}/standardPrice`);
    const listPrice = number(row.listPrice, `${at}/listPrice`);
    let adjustment: unknown = null;
    if (row.type === 'override' || row.type === 'percent') {
      adjustment = { type: row.type, amount: number(row.amount, `${at}/adjustment/amount`) };
    } else if (row.type !== '') {
      const list = row.type === 'volume' ? 'tiers' : 'values';
      const items = row.items.map((item, i) =>
        Object.fromEntries(
          itemColumns[row.type as keyof typeof itemColumns].map((column) => [
            column.name,
            column.kind === 'text'
              ? (item[column.name] ?? '')
              : number(item[column.name] ?? '', `${at}/adjustment/${list}/${i}/${column.name}`),
          ]),
        ),
      );
      adjustment = {
        type: row.type,
        ...(row.type === 'enum' || row.type === 'range' ? { property: row.property } : {}),
        [list]: items,
      };
    }
    sent.push(r);
    body.push({
      productId,
      currency: row.currency as Schemas['PriceWrite']['currency'],
      standardPrice,
      listPrice,
      adjustment: adjustment as Adjustment | null,
      ...(body.length === 0 ? { allowUnitPriceEditing } : {}),
    });
  });
  return { body, sent, local };
}

interface PriceState {
  /** The entry's prices as read, keyed by currency. */
  stored: Record<string, Schemas['CurrencyPrices']>;
  rows: PriceRow[];
  allowUnitPriceEditing: boolean;
  etag: string | null;
}

async function readPrices(
  session: Session,
  priceBookId: string,
  productId: string,
  currencies: string[],
): Promise<PriceState> {
  const [book, found] = await Promise.all([
    call(session.api.GET('/v1/pricebooks/{priceBookId}', { params: { path: { priceBookId } } })),
    call(
      session.api.GET('/v1/pricebooks/{priceBookId}/pricedProducts', {
        params: { path: { priceBookId }, query: { q: productId, limit: 100 } },
      }),
    ),
  ]);
  const entry = found.data.results.find((result) => result.productId === productId);
  const all = [...new Set([...currencies, ...Object.keys(entry?.prices ?? {})])].sort();
  return {
    stored: entry?.prices ?? {},
    rows: all.map((currency) => rowOf(currency, entry?.prices[currency])),
    allowUnitPriceEditing: entry?.allowUnitPriceEditing ?? false,
    etag: book.etag,
  };
}

function PricesSummary({ stored }: { stored: Record<string, Schemas['CurrencyPrices']> }) {
  const price = (value: number | null, currency: string) => (value === null ? '—' : money(value, currency));
  return (
    <ul class="plain">
      {Object.entries(stored).map(([currency, prices]) => (
        <li key={currency}>
          <strong>{currency}</strong>: list {price(prices.listPrice, currency)}, standard{' '}
          {price(prices.standardPrice, currency)}
          {prices.adjustment && `; ${adjustmentText(prices.adjustment, currency, prices.listPrice)}`}
        </li>
      ))}
    </ul>
  );
}

export function PriceEditor({
  session,
  priceBookId,
  productId,
  productName,
  optionName,
  currencies,
  onClose,
}: {
  session: Session;
  priceBookId: string;
  productId: string;
  /** What people call the product (its name property, else its id). */
  productName: string;
  optionName: string;
  currencies: string[];
  onClose: (saved: boolean) => void;
}) {
  const [state, setState] = useState<PriceState | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [sent, setSent] = useState<number[] | null>(null);
  const [conflict, setConflict] = useState<PriceState | null>(null);
  const [busy, setBusy] = useState(false);
  const [newCurrency, setNewCurrency] = useState('');
  useEffect(() => {
    readPrices(session, priceBookId, productId, currencies).then(setState, (error) =>
      setProblem(problemOf(error)),
    );
  }, []);
  if (state === null) return problem ? <ProblemBanner problem={problem} /> : <Loading what="prices" />;

  const update = (r: number, change: Partial<PriceRow>) =>
    setState({ ...state, rows: state.rows.map((row, i) => (i === r ? { ...row, ...change } : row)) });
  const save = async (over?: PriceState) => {
    const current = over ?? state;
    const { body, sent: order, local } = pricesBody(productId, current.rows, current.allowUnitPriceEditing);
    setSent(order);
    if (local.length > 0) return setProblem(checkedLocally(local));
    setBusy(true);
    try {
      await call(
        session.api.PUT('/v1/pricebooks/{priceBookId}/prices', {
          params: { path: { priceBookId }, header: current.etag ? { 'if-match': current.etag } : {} },
          body,
        }),
      );
      onClose(true);
    } catch (error) {
      const found = problemOf(error);
      if (found.status === 412) {
        setProblem(null);
        setConflict(await readPrices(session, priceBookId, productId, currencies).catch(() => null));
      } else setProblem(found);
    } finally {
      setBusy(false);
    }
  };
  const order = sent ?? pricesBody(productId, state.rows, state.allowUnitPriceEditing).sent;
  const pointerOf = (r: number, rest: string) =>
    order.includes(r) ? `/${order.indexOf(r)}${rest}` : `/row-${r}${rest}`;
  const fields: string[] = [];
  const field = (pointer: string) => {
    fields.push(pointer);
    return pointer;
  };

  return (
    <form
      class="editor"
      aria-label={`Prices of ${productName}`}
      onSubmit={(event) => {
        event.preventDefault();
        save();
      }}
    >
      <h3>
        Prices of {productName} {productName !== productId && <span class="mono small">{productId}</span>}{' '}
        <span class="muted">in {optionName}</span>
      </h3>
      {conflict && (
        <Conflict
          what="these prices"
          onTake={() => {
            setState(conflict);
            setConflict(null);
          }}
          onOverwrite={() => {
            const over = { ...state, etag: conflict.etag };
            setState(over);
            setConflict(null);
            save(over);
          }}
        >
          <PricesSummary stored={conflict.stored} />
        </Conflict>
      )}
      <label class="check">
        <input
          type="checkbox"
          checked={state.allowUnitPriceEditing}
          onChange={(event) => setState({ ...state, allowUnitPriceEditing: event.currentTarget.checked })}
        />
        Sales reps may edit the unit price in a quote
      </label>
      {state.rows.map((row, r) => (
        <fieldset key={row.currency} class="currency">
          <legend>{row.currency}</legend>
          <div class="row">
            <Field label="List price" pointer={field(pointerOf(r, '/listPrice'))} problem={problem}>
              {(props) => (
                <input
                  {...props}
                  inputMode="decimal"
                  value={row.listPrice}
                  onInput={(event) => update(r, { listPrice: event.currentTarget.value })}
                />
              )}
            </Field>
            <Field label="Standard price" pointer={field(pointerOf(r, '/standardPrice'))} problem={problem}>
              {(props) => (
                <input
                  {...props}
                  inputMode="decimal"
                  value={row.standardPrice}
                  onInput={(event) => update(r, { standardPrice: event.currentTarget.value })}
                />
              )}
            </Field>
            <Field label="Adjustment" pointer={field(pointerOf(r, '/adjustment'))} problem={problem}>
              {(props) => (
                <select
                  {...props}
                  value={row.type}
                  onChange={(event) => {
                    const type = event.currentTarget.value as AdjustmentType | '';
                    const seed = type === '' || type === 'override' || type === 'percent' ? [] : [{}];
                    update(r, { type, items: type === row.type ? row.items : seed });
                  }}
                >
                  <option value="">None</option>
                  {(Object.keys(adjustmentLabels) as AdjustmentType[]).map((type) => (
                    <option key={type} value={type}>
                      {adjustmentLabels[type]}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            {(row.type === 'override' || row.type === 'percent') && (
              <Field
                label={row.type === 'percent' ? 'Percent off (negative: markup)' : 'Unit price'}
                pointer={field(pointerOf(r, '/adjustment/amount'))}
                problem={problem}
              >
                {(props) => (
                  <input
                    {...props}
                    inputMode="decimal"
                    value={row.amount}
                    onInput={(event) => update(r, { amount: event.currentTarget.value })}
                  />
                )}
              </Field>
            )}
            {(row.type === 'enum' || row.type === 'range') && (
              <Field label="Property" pointer={field(pointerOf(r, '/adjustment/property'))} problem={problem}>
                {(props) => (
                  <input
                    {...props}
                    value={row.property}
                    onInput={(event) => update(r, { property: event.currentTarget.value })}
                  />
                )}
              </Field>
            )}
          </div>
          {row.type !== '' && row.type !== 'override' && row.type !== 'percent' && (
            <div class="items">
              {row.items.map((item, i) => {
                const list = row.type === 'volume' ? 'tiers' : 'values';
                return (
                  <div class="row" key={i} data-pointer={pointerOf(r, `/adjustment/${list}/${i}`)}>
                    {itemColumns[row.type as keyof typeof itemColumns].map((column) => (
                      <Field
                        key={column.name}
                        label={column.label}
                        pointer={field(pointerOf(r, `/adjustment/${list}/${i}/${column.name}`))}
                        problem={problem}
                      >
                        {(props) => (
                          <input
                            {...props}
                            inputMode={column.kind === 'text' ? 'text' : 'decimal'}
                            value={item[column.name] ?? ''}
                            onInput={(event) =>
                              update(r, {
                                items: row.items.map((it, j) =>
                                  j === i ? { ...it, [column.name]: event.currentTarget.value } : it,
                                ),
                              })
                            }
                          />
                        )}
                      </Field>
                    ))}
                    <button
                      type="button"
                      class="secondary small"
                      aria-label={`Remove line ${i + 1}`}
                      onClick={() => update(r, { items: row.items.filter((_, j) => j !== i) })}
                    >
                      Remove
                    </button>
                  </div>
                );
              })}
              <button
                type="button"
                class="secondary small"
                onClick={() => update(r, { items: [...row.items, {}] })}
              >
                Add a line
              </button>
            </div>
          )}
        </fieldset>
      ))}
      <div class="row">
        <div class="field">
          <label for="new-currency">Add a currency</label>
          <input
            id="new-currency"
            maxLength={3}
            placeholder="e.g. GBP"
            value={newCurrency}
            onInput={(event) => setNewCurrency(event.currentTarget.value.toUpperCase())}
          />
        </div>
        <button
          type="button"
          class="secondary"
          disabled={!/^[A-Z]{3}$/.test(newCurrency) || state.rows.some((row) => row.currency === newCurrency)}
          onClick={() => {
            setState({ ...state, rows: [...state.rows, rowOf(newCurrency, undefined)] });
            setNewCurrency('');
          }}
        >
          Add
        </button>
      </div>
      <FormEnd
        problem={problem}
        fields={fields}
        busy={busy}
        saveLabel="Save prices"
        onCancel={() => onClose(false)}
      />
    </form>
  );
}

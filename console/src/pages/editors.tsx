// The edit forms of the bundle page: prices and adjustments of one product, an option's settings, a rule. Each
// sends its write with the If-Match of what it read, shows every 400/422 problem at the field its pointer names,
// and on a 412 shows what the other edit left and lets the person take it or save theirs over it.
import type { Schemas } from '@cpq/client';
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { describeAdjustment, describeRule, money, type Names } from '../format.ts';
import { call, localProblem, type Problem, ProblemError, problemOf, type Session } from '../session.ts';
import { Field, Loading, numberText, ProblemBanner, parseNumber } from '../ui.tsx';

type Adjustment = Schemas['PriceAdjustment'];
type AdjustmentType = Adjustment['type'];
type ProblemItem = Schemas['ProblemItem'];

/** Problems found before sending, in the service's shape, so they show at their fields the same way. */
function checkedLocally(items: ProblemItem[]): Problem {
  return {
    ...localProblem('The form is not valid', `${items.length} field(s) to correct`, 400),
    code: 'validation_failed',
    errors: items,
  };
}

function Conflict({
  what,
  children,
  onTake,
  onOverwrite,
}: {
  what: string;
  children: ComponentChildren;
  onTake: () => void;
  onOverwrite: () => void;
}) {
  return (
    <div class="conflict" role="alert" data-status="412">
      <strong>Someone else changed {what} while you were editing.</strong>
      <p>Nothing of yours was saved. These are the values now stored:</p>
      {children}
      <div class="actions">
        <button type="button" onClick={onTake}>
          Use the current values
        </button>
        <button type="button" class="secondary" onClick={onOverwrite}>
          Save mine over them
        </button>
      </div>
    </div>
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Prices and adjustments of one product

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
  optionName,
  currencies,
  onClose,
}: {
  session: Session;
  priceBookId: string;
  productId: string;
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
      aria-label={`Prices of ${productId}`}
      onSubmit={(event) => {
        event.preventDefault();
        save();
      }}
    >
      <h3>
        Prices of {productId} <span class="muted">in {optionName}</span>
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
      <ProblemBanner problem={problem} fields={fields} />
      <div class="actions">
        <button type="submit" disabled={busy}>
          {busy ? 'Saving…' : 'Save prices'}
        </button>
        <button type="button" class="secondary" onClick={() => onClose(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Option settings

interface OptionForm {
  name: string;
  description: string;
  type: 'INCLUDED' | 'ADD_ON';
  minCount: string;
  maxCount: string;
  defaultOptionProductId: string;
}

interface OptionState {
  form: OptionForm;
  products: Schemas['OptionProduct'][];
  etag: string | null;
}

async function readOption(session: Session, bundleId: string, optionId: string): Promise<OptionState> {
  const { data, etag } = await call(
    session.api.GET('/v1/bundles/{bundleId}/options/{optionId}', {
      params: { path: { bundleId, optionId } },
    }),
  );
  return {
    form: {
      name: data.name,
      description: data.description ?? '',
      type: data.type,
      minCount: numberText(data.configuration.minCount),
      maxCount: numberText(data.configuration.maxCount),
      defaultOptionProductId: data.configuration.defaultOptionProductId ?? '',
    },
    products: data.products,
    etag,
  };
}

export function OptionEditor({
  session,
  bundleId,
  optionId,
  onClose,
}: {
  session: Session;
  bundleId: string;
  optionId: string;
  onClose: (saved: boolean) => void;
}) {
  const [state, setState] = useState<OptionState | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [conflict, setConflict] = useState<OptionState | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    readOption(session, bundleId, optionId).then(setState, (error) => setProblem(problemOf(error)));
  }, []);
  if (state === null) return problem ? <ProblemBanner problem={problem} /> : <Loading what="the option" />;
  const { form } = state;
  const set = (change: Partial<OptionForm>) => setState({ ...state, form: { ...form, ...change } });
  const save = async (over?: OptionState) => {
    const current = over ?? state;
    const local: ProblemItem[] = [];
    const count = (text: string, pointer: string) => {
      const value = parseNumber(text);
      if (Number.isNaN(value))
        local.push({ code: 'invalid_type', in: 'body', pointer, message: 'must be a number' });
      return value;
    };
    const minCount = count(current.form.minCount, '/configuration/minCount');
    const maxCount = count(current.form.maxCount, '/configuration/maxCount');
    if (local.length > 0) return setProblem(checkedLocally(local));
    setBusy(true);
    try {
      await call(
        session.api.PUT('/v1/bundles/{bundleId}/options/{optionId}', {
          params: {
            path: { bundleId, optionId },
            header: current.etag ? { 'if-match': current.etag } : {},
          },
          body: {
            name: current.form.name,
            description: current.form.description.trim() === '' ? null : current.form.description,
            type: current.form.type,
            configuration: {
              minCount,
              maxCount,
              defaultOptionProductId: current.form.defaultOptionProductId || null,
            },
          },
        }),
      );
      onClose(true);
    } catch (error) {
      const found = problemOf(error);
      if (found.status === 412) {
        setProblem(null);
        setConflict(await readOption(session, bundleId, optionId).catch(() => null));
      } else setProblem(found);
    } finally {
      setBusy(false);
    }
  };
  const fields = [
    '/name',
    '/description',
    '/type',
    '/configuration/minCount',
    '/configuration/maxCount',
    '/configuration/defaultOptionProductId',
  ];
  return (
    <form
      class="editor"
      aria-label="Option settings"
      onSubmit={(event) => {
        event.preventDefault();
        save();
      }}
    >
      <h3>Settings of {form.name}</h3>
      {conflict && (
        <Conflict
          what="this option"
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
          <ul class="plain">
            <li>Name: {conflict.form.name}</li>
            <li>Type: {conflict.form.type}</li>
            <li>
              Products chosen: {conflict.form.minCount || 'no minimum'} to{' '}
              {conflict.form.maxCount || 'no maximum'}
            </li>
          </ul>
        </Conflict>
      )}
      <div class="row">
        <Field label="Name" pointer="/name" problem={problem}>
          {(props) => (
            <input {...props} value={form.name} onInput={(e) => set({ name: e.currentTarget.value })} />
          )}
        </Field>
        <Field label="Type" pointer="/type" problem={problem}>
          {(props) => (
            <select
              {...props}
              value={form.type}
              onChange={(e) => set({ type: e.currentTarget.value as OptionForm['type'] })}
            >
              <option value="INCLUDED">Included (required in a quote)</option>
              <option value="ADD_ON">Add-on (optional)</option>
            </select>
          )}
        </Field>
      </div>
      <div class="row">
        <Field
          label="Fewest products"
          pointer="/configuration/minCount"
          problem={problem}
          hint="Empty: no minimum"
        >
          {(props) => (
            <input
              {...props}
              inputMode="numeric"
              value={form.minCount}
              onInput={(e) => set({ minCount: e.currentTarget.value })}
            />
          )}
        </Field>
        <Field
          label="Most products"
          pointer="/configuration/maxCount"
          problem={problem}
          hint="Empty: no maximum"
        >
          {(props) => (
            <input
              {...props}
              inputMode="numeric"
              value={form.maxCount}
              onInput={(e) => set({ maxCount: e.currentTarget.value })}
            />
          )}
        </Field>
        <Field label="Default product" pointer="/configuration/defaultOptionProductId" problem={problem}>
          {(props) => (
            <select
              {...props}
              value={form.defaultOptionProductId}
              onChange={(e) => set({ defaultOptionProductId: e.currentTarget.value })}
            >
              <option value="">None</option>
              {state.products.map((product) => (
                <option key={product.id} value={product.id}>
                  {product.productId}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <Field label="Description" pointer="/description" problem={problem}>
        {(props) => (
          <textarea
            {...props}
            rows={2}
            value={form.description}
            onInput={(e) => set({ description: e.currentTarget.value })}
          />
        )}
      </Field>
      <ProblemBanner problem={problem} fields={fields} />
      <div class="actions">
        <button type="submit" disabled={busy}>
          {busy ? 'Saving…' : 'Save settings'}
        </button>
        <button type="button" class="secondary" onClick={() => onClose(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Rules

type Selector = Schemas['RuleSelector'];
type WhenMode = 'one' | 'all' | 'any' | 'not' | 'json';

interface RuleForm {
  name: string;
  kind: 'requires' | 'excludes';
  mode: WhenMode;
  when: Selector[];
  whenJson: string;
  then: Selector[];
  message: string;
  isActive: boolean;
}

export interface OptionChoice {
  id: string;
  name: string;
  products: string[];
}

function isSelector(value: unknown): value is Selector {
  return typeof value === 'object' && value !== null && 'optionId' in value;
}

function formOf(rule: Schemas['Rule'] | null, options: OptionChoice[]): RuleForm {
  const first: Selector = { optionId: options[0]?.id ?? '' };
  if (rule === null) {
    return {
      name: '',
      kind: 'requires',
      mode: 'one',
      when: [first],
      whenJson: '',
      then: [first],
      message: '',
      isActive: true,
    };
  }
  const base = {
    name: rule.name,
    kind: rule.kind,
    then: rule.then,
    message: rule.message ?? '',
    isActive: rule.isActive,
    whenJson: JSON.stringify(rule.when, null, 2),
  };
  const when = rule.when as unknown as Record<string, unknown>;
  if (isSelector(when)) return { ...base, mode: 'one', when: [when] };
  for (const mode of ['all', 'any'] as const) {
    const list = when[mode];
    if (Array.isArray(list) && list.every(isSelector)) return { ...base, mode, when: list };
  }
  if (isSelector(when.not)) return { ...base, mode: 'not', when: [when.not] };
  return { ...base, mode: 'json', when: [first] };
}

function SelectorFields({
  selector,
  pointer,
  options,
  problem,
  onChange,
  onRemove,
}: {
  selector: Selector;
  pointer: string;
  options: OptionChoice[];
  problem: Problem | null;
  onChange: (selector: Selector) => void;
  onRemove?: () => void;
}) {
  const option = options.find((o) => o.id === selector.optionId);
  return (
    <div class="row selector">
      <Field label="Option" pointer={`${pointer}/optionId`} problem={problem}>
        {(props) => (
          <select
            {...props}
            value={selector.optionId}
            onChange={(e) => onChange({ optionId: e.currentTarget.value })}
          >
            {options.map((o) => (
              <option key={o.id} value={o.id}>
                {o.name}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Product" pointer={`${pointer}/productId`} problem={problem}>
        {(props) => (
          <select
            {...props}
            value={selector.productId ?? ''}
            onChange={(e) =>
              onChange(
                e.currentTarget.value === ''
                  ? { optionId: selector.optionId }
                  : { optionId: selector.optionId, productId: e.currentTarget.value },
              )
            }
          >
            <option value="">Any product of the option</option>
            {(option?.products ?? []).map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        )}
      </Field>
      {onRemove && (
        <button type="button" class="secondary small" onClick={onRemove}>
          Remove
        </button>
      )}
    </div>
  );
}

export function RuleEditor({
  session,
  bundleId,
  ruleId,
  options,
  names,
  onClose,
}: {
  session: Session;
  bundleId: string;
  /** null: a new rule. */
  ruleId: string | null;
  options: OptionChoice[];
  names: Names;
  onClose: (saved: boolean) => void;
}) {
  const [state, setState] = useState<{ form: RuleForm; etag: string | null } | null>(
    ruleId === null ? { form: formOf(null, options), etag: null } : null,
  );
  const [problem, setProblem] = useState<Problem | null>(null);
  const [conflict, setConflict] = useState<{ rule: Schemas['Rule']; etag: string | null } | null>(null);
  const [busy, setBusy] = useState(false);
  const read = async () => {
    const { data, etag } = await call(
      session.api.GET('/v1/bundles/{bundleId}/rules/{ruleId}', {
        params: { path: { bundleId, ruleId: ruleId ?? '' } },
      }),
    );
    return { rule: data, etag };
  };
  useEffect(() => {
    if (ruleId !== null) {
      read().then(
        ({ rule, etag }) => setState({ form: formOf(rule, options), etag }),
        (error) => setProblem(problemOf(error)),
      );
    }
  }, []);
  if (state === null) return problem ? <ProblemBanner problem={problem} /> : <Loading what="the rule" />;
  const { form } = state;
  const set = (change: Partial<RuleForm>) => setState({ ...state, form: { ...form, ...change } });

  const save = async (etag: string | null) => {
    let when: unknown;
    if (form.mode === 'json') {
      try {
        when = JSON.parse(form.whenJson);
      } catch {
        return setProblem(
          checkedLocally([
            { code: 'malformed_json', in: 'body', pointer: '/when', message: 'is not valid JSON' },
          ]),
        );
      }
    } else if (form.mode === 'one') when = form.when[0];
    else if (form.mode === 'not') when = { not: form.when[0] };
    else when = { [form.mode]: form.when };
    const body: Schemas['RuleBody'] = {
      name: form.name,
      kind: form.kind,
      when: when as Schemas['RuleCondition'],
      then: form.then,
      message: form.message.trim() === '' ? null : form.message,
      isActive: form.isActive,
    };
    setBusy(true);
    try {
      if (ruleId === null) {
        await call(
          session.api.POST('/v1/bundles/{bundleId}/rules', { params: { path: { bundleId } }, body }),
        );
      } else {
        await call(
          session.api.PUT('/v1/bundles/{bundleId}/rules/{ruleId}', {
            params: { path: { bundleId, ruleId }, header: etag ? { 'if-match': etag } : {} },
            body,
          }),
        );
      }
      onClose(true);
    } catch (error) {
      const found = error instanceof ProblemError ? error.problem : problemOf(error);
      if (found.status === 412) {
        setProblem(null);
        setConflict(await read().catch(() => null));
      } else setProblem(found);
    } finally {
      setBusy(false);
    }
  };

  const whenPointer = (i: number) =>
    form.mode === 'one' ? '/when' : form.mode === 'not' ? '/when/not' : `/when/${form.mode}/${i}`;
  const fields = [
    '/name',
    '/kind',
    '/message',
    '/when',
    ...form.when.flatMap((_, i) => [`${whenPointer(i)}/optionId`, `${whenPointer(i)}/productId`]),
    ...form.then.flatMap((_, i) => [`/then/${i}/optionId`, `/then/${i}/productId`]),
  ];
  return (
    <form
      class="editor"
      aria-label={ruleId === null ? 'New rule' : 'Edit rule'}
      onSubmit={(event) => {
        event.preventDefault();
        save(state.etag);
      }}
    >
      <h3>{ruleId === null ? 'New rule' : `Rule ${form.name}`}</h3>
      {conflict && (
        <Conflict
          what="this rule"
          onTake={() => {
            setState({ form: formOf(conflict.rule, options), etag: conflict.etag });
            setConflict(null);
          }}
          onOverwrite={() => {
            setState({ ...state, etag: conflict.etag });
            setConflict(null);
            save(conflict.etag);
          }}
        >
          <p>
            <strong>{conflict.rule.name}</strong>: {describeRule(conflict.rule, names)}
            {conflict.rule.isActive ? '' : ' (inactive)'}
          </p>
        </Conflict>
      )}
      <div class="row">
        <Field label="Name" pointer="/name" problem={problem}>
          {(props) => (
            <input {...props} value={form.name} onInput={(e) => set({ name: e.currentTarget.value })} />
          )}
        </Field>
        <Field label="Kind" pointer="/kind" problem={problem}>
          {(props) => (
            <select
              {...props}
              value={form.kind}
              onChange={(e) => set({ kind: e.currentTarget.value as RuleForm['kind'] })}
            >
              <option value="requires">Requires</option>
              <option value="excludes">Excludes</option>
            </select>
          )}
        </Field>
        <label class="check">
          <input
            type="checkbox"
            checked={form.isActive}
            onChange={(e) => set({ isActive: e.currentTarget.checked })}
          />
          Active
        </label>
      </div>
      <fieldset>
        <legend>When</legend>
        <div class="field">
          <label for="rule-when-mode">Condition</label>
          <select
            id="rule-when-mode"
            value={form.mode}
            onChange={(e) => set({ mode: e.currentTarget.value as WhenMode })}
          >
            <option value="one">This is chosen</option>
            <option value="all">All of these are chosen</option>
            <option value="any">Any of these is chosen</option>
            <option value="not">This is not chosen</option>
            <option value="json">A deeper condition (JSON)</option>
          </select>
        </div>
        {form.mode === 'json' ? (
          <Field label="Condition as JSON" pointer="/when" problem={problem}>
            {(props) => (
              <textarea
                {...props}
                rows={6}
                class="mono"
                value={form.whenJson}
                onInput={(e) => set({ whenJson: e.currentTarget.value })}
              />
            )}
          </Field>
        ) : (
          (form.mode === 'one' || form.mode === 'not' ? form.when.slice(0, 1) : form.when).map(
            (selector, i) => (
              <SelectorFields
                key={i}
                selector={selector}
                pointer={whenPointer(i)}
                options={options}
                problem={problem}
                onChange={(next) => set({ when: form.when.map((s, j) => (j === i ? next : s)) })}
                onRemove={
                  form.when.length > 1 ? () => set({ when: form.when.filter((_, j) => j !== i) }) : undefined
                }
              />
            ),
          )
        )}
        {(form.mode === 'all' || form.mode === 'any') && (
          <button
            type="button"
            class="secondary small"
            onClick={() => set({ when: [...form.when, { optionId: options[0]?.id ?? '' }] })}
          >
            Add a condition
          </button>
        )}
      </fieldset>
      <fieldset>
        <legend>{form.kind === 'requires' ? 'Then require' : 'Then exclude'}</legend>
        {form.then.map((selector, i) => (
          <SelectorFields
            key={i}
            selector={selector}
            pointer={`/then/${i}`}
            options={options}
            problem={problem}
            onChange={(next) => set({ then: form.then.map((s, j) => (j === i ? next : s)) })}
            onRemove={
              form.then.length > 1 ? () => set({ then: form.then.filter((_, j) => j !== i) }) : undefined
            }
          />
        ))}
        <button
          type="button"
          class="secondary small"
          onClick={() => set({ then: [...form.then, { optionId: options[0]?.id ?? '' }] })}
        >
          Add a product
        </button>
      </fieldset>
      <Field label="Message for sales reps" pointer="/message" problem={problem}>
        {(props) => (
          <input {...props} value={form.message} onInput={(e) => set({ message: e.currentTarget.value })} />
        )}
      </Field>
      <ProblemBanner problem={problem} fields={fields} />
      <div class="actions">
        <button type="submit" disabled={busy}>
          {busy ? 'Saving…' : 'Save rule'}
        </button>
        <button type="button" class="secondary" onClick={() => onClose(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** An adjustment in words, for the price grid. */
export function adjustmentText(
  adjustment: Adjustment | null | undefined,
  currency: string,
  listPrice: number | null | undefined,
): string | null {
  if (!adjustment) return null;
  const words = describeAdjustment(
    adjustment,
    currency,
    listPrice === null || listPrice === undefined ? 'standard' : 'list',
  );
  return adjustment.allowUnitPriceEditing ? `${words}; reps may edit the unit price` : words;
}

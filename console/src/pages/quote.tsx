// The quote builder: every change of the selections asks POST /v1/bundles/{id}/configure, which answers each
// product's exact state (selected, required, excluded, available) with its reasons and unit price, the violations,
// the repairs of a conflict (offered as one-click fixes), a completion and its quote. The selections live in the
// URL, so a configuration can be linked and survives a reload.
import type { Schemas } from '@cpq/client';
import { useState } from 'preact/hooks';
import { money } from '../format.ts';
import { href, Link, navigate, type Place } from '../router.tsx';
import { call, type Problem, problemOf, type Session } from '../session.ts';
import { Loading, ProblemBanner, useLoad, usePageTitle } from '../ui.tsx';
import { countText, currenciesOf } from './bundle.tsx';

type Currency = NonNullable<Schemas['ConfigureRequest']['currency']>;
type Selection = Schemas['ConfigureRequest']['selections'][number];
type Rejection = NonNullable<Schemas['ConfigureRequest']['rejections']>[number];
type Trace = Schemas['QuoteTrace'];
type Repair = Schemas['ConfigureRepair'];
type Choice = { optionId: string; productId: string };

/** Selections as URL values: optionId~quantity~productId (a CRM product id may hold any character, so it is last). */
function readSelections(query: URLSearchParams): Selection[] {
  return query.getAll('s').flatMap((value) => {
    const [optionId, quantity, ...rest] = value.split('~');
    if (optionId === undefined || rest.length === 0) return [];
    const selection: Selection = { optionId, productId: rest.join('~') };
    if (quantity) selection.quantity = Number(quantity);
    return [selection];
  });
}

function readRejections(query: URLSearchParams): Rejection[] {
  return query.getAll('r').flatMap((value) => {
    const [optionId, ...rest] = value.split('~');
    return optionId === undefined || rest.length === 0 ? [] : [{ optionId, productId: rest.join('~') }];
  });
}

function placeOf(
  bundleId: string,
  currency: string,
  quantity: number,
  selections: Selection[],
  rejections: Rejection[],
) {
  const search = new URLSearchParams();
  search.set('currency', currency);
  if (quantity !== 1) search.set('quantity', String(quantity));
  for (const s of selections) search.append('s', `${s.optionId}~${s.quantity ?? ''}~${s.productId}`);
  for (const r of rejections) search.append('r', `${r.optionId}~${r.productId}`);
  return `${href(`/bundles/${encodeURIComponent(bundleId)}/quote`)}?${search}`;
}

function traceWords(trace: Trace, currency: string): string[] {
  const words = [`Price book ${trace.priceBookId}, option product ${trace.optionProductId}`];
  if (trace.defaulted) words.push('Added as the default product of an included option');
  const basis: Record<Trace['basis'], string> = {
    listPrice: 'The list price, no adjustment',
    standardPrice: 'The standard price, no adjustment',
    override: 'A fixed unit price (override)',
    percent: `${trace.percent}% ${trace.percent !== undefined && trace.percent < 0 ? 'markup on' : 'off'} the ${
      trace.base?.source === 'standardPrice' ? 'standard' : 'list'
    } price${trace.base ? ` of ${money(trace.base.price, currency)}` : ''}`,
    tier: `The volume tier ${trace.tier?.firstUnit}${trace.tier?.lastUnit === null ? ' and more' : `–${trace.tier?.lastUnit}`} units`,
    value: `The value ${trace.value} of the property ${trace.property}`,
    range: `The range ${trace.range?.firstUnit}–${trace.range?.lastUnit} holding ${trace.property} = ${trace.value}`,
    variant: `The variant ${trace.value}`,
  };
  words.push(basis[trace.basis]);
  words.push(`Price book unit price ${money(trace.priceBookUnitPrice, currency)}`);
  if (trace.unitPriceEdited) words.push('Unit price edited in the quote');
  return words;
}

const stateLabels = {
  selected: 'Selected',
  required: 'Required',
  excluded: 'Excluded',
  available: 'Available',
} as const;

export function QuotePage({
  bundleId,
  place,
  session,
}: {
  bundleId: string;
  place: Place;
  session: Session;
}) {
  usePageTitle('Quote builder');
  const details = useLoad(
    async () =>
      (await call(session.api.GET('/v1/bundles-details', { params: { query: { bundleIds: bundleId } } })))
        .data.bundles[0] ?? null,
    [bundleId],
  );
  const selections = readSelections(place.query);
  const rejections = readRejections(place.query);
  const currencies = details.data ? currenciesOf(details.data) : [];
  const currency = place.query.get('currency') ?? currencies[0] ?? 'USD';
  const quantity = Number(place.query.get('quantity') ?? '1') || 1;
  const [openTrace, setOpenTrace] = useState<number | null>(null);
  const [saving, setSaving] = useState(false);
  const [saveProblem, setSaveProblem] = useState<Problem | null>(null);
  const answer = useLoad(
    async () =>
      (
        await call(
          session.api.POST('/v1/bundles/{bundleId}/configure', {
            params: { path: { bundleId } },
            body: { currency: currency as Currency, quantity, selections, rejections },
          }),
        )
      ).data,
    [bundleId, place.query.toString(), currency],
  );
  const go = (next: {
    selections?: Selection[];
    rejections?: Rejection[];
    currency?: string;
    quantity?: number;
  }) =>
    navigate(
      placeOf(
        bundleId,
        next.currency ?? currency,
        next.quantity ?? quantity,
        next.selections ?? selections,
        next.rejections ?? rejections,
      ),
      { replace: true },
    );

  if (details.data === undefined)
    return details.problem ? <ProblemBanner problem={details.problem} /> : <Loading what="the bundle" />;
  if (details.data === null) return <p class="empty">This bundle does not exist.</p>;
  const bundle = details.data;
  const names = new Map([...bundle.included, ...bundle.addOns].map((o) => [o.id, o.name]));
  // A product by its `name` property where it has one, as the service's messages name it.
  const productNames = new Map(
    [...bundle.included, ...bundle.addOns].flatMap((o) =>
      o.products.flatMap((p) => (p.properties.name ? [[`${o.id}\n${p.productId}`, p.properties.name]] : [])),
    ),
  );
  const productName = (c: Choice) => productNames.get(`${c.optionId}\n${c.productId}`);
  const product = (c: Choice) => {
    const name = productName(c);
    return name ? `${name} (${c.productId})` : c.productId;
  };
  const option = (c: Choice) => names.get(c.optionId) ?? c.optionId;
  const bundleName = bundle.header.properties.name ?? bundle.header.productId;
  const result = answer.data;
  // No valid configuration extends a conflict, so every product not chosen is "excluded" by the conflict alone:
  // shown as on hold until a way out is taken, not as excluded for good.
  const conflict = result !== undefined && !result.valid;
  // The same product, by option and product id.
  const same = (a: Choice) => (b: Choice) => a.optionId === b.optionId && a.productId === b.productId;
  const isSelected = (optionId: string, productId: string) =>
    selections.some((s) => s.optionId === optionId && s.productId === productId);
  const isRejected = (optionId: string, productId: string) =>
    rejections.some((s) => s.optionId === optionId && s.productId === productId);
  const toggle = (optionId: string, productId: string) =>
    go({
      selections: isSelected(optionId, productId)
        ? selections.filter((s) => !(s.optionId === optionId && s.productId === productId))
        : [...selections, { optionId, productId }],
      rejections: rejections.filter((s) => !(s.optionId === optionId && s.productId === productId)),
    });
  // Empty: the product's default quantity (its minQuantity, at least 1).
  const setQuantity = (optionId: string, productId: string, text: string) =>
    go({
      selections: selections.map((s) =>
        s.optionId === optionId && s.productId === productId
          ? text.trim() === ''
            ? { optionId, productId }
            : { ...s, quantity: Math.max(0, Math.floor(Number(text)) || 0) }
          : s,
      ),
    });
  const toggleRejection = (optionId: string, productId: string) =>
    go({
      rejections: isRejected(optionId, productId)
        ? rejections.filter((s) => !(s.optionId === optionId && s.productId === productId))
        : [...rejections, { optionId, productId }],
    });
  const added = result?.completion?.selections.filter((c) => !isSelected(c.optionId, c.productId)) ?? [];
  const repairWords = (repair: Repair) =>
    [
      ...repair.remove.map((c) => `Remove ${product(c)} from ${option(c)}`),
      ...repair.unreject.map((c) => `Allow ${product(c)} in ${option(c)} again`),
    ].join(', and ');
  const applyRepair = (repair: Repair) =>
    go({
      selections: selections.filter((s) => !repair.remove.some(same(s))),
      rejections: rejections.filter((r) => !repair.unreject.some(same(r))),
    });

  // The configuration as the builder completed it, with each product's quantity, saved as a draft quote.
  const saveQuote = async () => {
    const chosen = result?.completion?.selections ?? [];
    const optionIds = [...new Set(chosen.map((c) => c.optionId))];
    setSaving(true);
    setSaveProblem(null);
    try {
      const { data } = await call(
        session.api.POST('/v1/quotes', {
          body: {
            currency: currency as Currency,
            bundles: [
              {
                bundleId,
                quantity,
                options: optionIds.map((optionId) => ({
                  optionId,
                  products: chosen
                    .filter((c) => c.optionId === optionId)
                    .map((c) => ({ productId: c.productId, quantity: c.quantity })),
                })),
              },
            ],
          },
        }),
      );
      navigate(href(`/quotes/${encodeURIComponent(data.id)}`));
    } catch (error) {
      setSaveProblem(problemOf(error));
      setSaving(false);
    }
  };

  return (
    <section class="quote">
      <nav class="crumbs" aria-label="Breadcrumb">
        <Link to={href('/bundles')}>Bundles</Link> /{' '}
        <Link to={href(`/bundles/${encodeURIComponent(bundleId)}`)}>{bundleName}</Link> /{' '}
        <span aria-current="page">Quote</span>
      </nav>
      <h1>Quote for {bundleName}</h1>
      <div class="filters">
        <div class="field">
          <label for="quote-currency">Currency</label>
          <select
            id="quote-currency"
            value={currency}
            onChange={(e) => go({ currency: e.currentTarget.value })}
          >
            {(currencies.includes(currency) ? currencies : [currency, ...currencies]).map((c) => (
              <option key={c} value={c}>
                {c}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="quote-quantity">Bundles</label>
          <input
            id="quote-quantity"
            type="number"
            min={1}
            value={quantity}
            onChange={(e) => go({ quantity: Math.max(1, Number(e.currentTarget.value) || 1) })}
          />
        </div>
        {(selections.length > 0 || rejections.length > 0) && (
          <button type="button" class="secondary" onClick={() => go({ selections: [], rejections: [] })}>
            Start again
          </button>
        )}
      </div>
      <ProblemBanner problem={answer.problem} />
      <div class="builder">
        <div class="choices">
          {conflict && (
            <section class="notice repairs" aria-labelledby="repairs-heading">
              <h2 id="repairs-heading">These choices conflict</h2>
              <p class="small">
                Until the conflict is fixed, the products not chosen are on hold.
                {result.repairs.length > 0 ? ' One click fixes it:' : ''}
              </p>
              {result.repairs.length > 0 && (
                <ul class="plain">
                  {result.repairs.map((repair) => (
                    <li key={repairWords(repair)}>
                      <button type="button" class="secondary" onClick={() => applyRepair(repair)}>
                        {repairWords(repair)}
                      </button>
                    </li>
                  ))}
                </ul>
              )}
            </section>
          )}
          {(result?.options ?? []).map((option) => (
            <fieldset key={option.optionId} class="option" data-option={option.optionId}>
              <legend>
                {names.get(option.optionId) ?? option.optionId}{' '}
                <span class="muted small">
                  {option.type === 'INCLUDED' ? 'included' : 'add-on'}, {countText(option)}
                </span>
              </legend>
              <ul class="plain products">
                {option.products.map((product) => {
                  const id = `choice-${option.optionId}-${product.productId}`;
                  const rejected = isRejected(option.optionId, product.productId);
                  const selected = selections.find(
                    (s) => s.optionId === option.optionId && s.productId === product.productId,
                  );
                  const held = conflict && product.state === 'excluded' && !rejected;
                  const name = productName({ optionId: option.optionId, productId: product.productId });
                  return (
                    <li
                      key={product.productId}
                      class={`choice ${held ? 'held' : product.state}`}
                      data-product={product.productId}
                      data-state={product.state}
                    >
                      <label for={id} class="check">
                        <input
                          id={id}
                          type="checkbox"
                          checked={isSelected(option.optionId, product.productId)}
                          onChange={() => toggle(option.optionId, product.productId)}
                        />
                        {name && <span>{name}</span>} <span class="mono">{product.productId}</span>
                      </label>
                      <span class="price num">
                        {product.unitPrice === undefined
                          ? ''
                          : product.unitPrice === null
                            ? 'no price'
                            : money(product.unitPrice, currency)}
                      </span>
                      <span class={`badge state-${held ? 'held' : product.state}`}>
                        {rejected ? 'Left out' : held ? 'On hold' : stateLabels[product.state]}
                      </span>
                      {selected && (
                        <input
                          class="quantity"
                          type="number"
                          min={0}
                          aria-label={`Quantity of ${product.productId}`}
                          placeholder="default"
                          value={selected.quantity ?? ''}
                          onChange={(e) =>
                            setQuantity(option.optionId, product.productId, e.currentTarget.value)
                          }
                        />
                      )}
                      {(rejected || product.state === 'available' || product.state === 'required') && (
                        <button
                          type="button"
                          class="link small"
                          aria-pressed={rejected}
                          onClick={() => toggleRejection(option.optionId, product.productId)}
                        >
                          {rejected ? 'Allow' : 'Leave out'}
                          <span class="visually-hidden"> {product.productId}</span>
                        </button>
                      )}
                      {product.reasons.length > 0 && (
                        <ul class="reasons small">
                          {product.reasons.map((reason) => (
                            <li key={`${reason.ruleId}:${reason.message}`}>{reason.message}</li>
                          ))}
                        </ul>
                      )}
                    </li>
                  );
                })}
              </ul>
            </fieldset>
          ))}
          {result === undefined && answer.problem === null && <Loading what="the configuration" />}
        </div>
        <aside class="summary" aria-labelledby="summary-heading" aria-live="polite">
          <h2 id="summary-heading">Summary</h2>
          {result && (
            <>
              <p
                class={result.valid ? 'verdict ok' : 'verdict bad'}
                data-valid={String(result.valid)}
                data-complete={String(result.complete)}
              >
                {!result.valid
                  ? 'These choices break the rules: no valid quote contains them.'
                  : result.complete
                    ? 'These choices make a valid configuration.'
                    : 'Not complete yet: the suggestion below makes it valid.'}
              </p>
              {result.violations.length > 0 && (
                <ul class="violations">
                  {result.violations.map((v) => (
                    <li key={`${v.ruleId}:${v.optionId}:${v.message}`}>{v.message}</li>
                  ))}
                </ul>
              )}

              {result.valid && !result.complete && added.length > 0 && (
                <div class="completion">
                  <p>
                    Suggested: add{' '}
                    {added.map((c) => `${productName(c) ?? c.productId} (${option(c)})`).join(', ')}.
                  </p>
                  <button
                    type="button"
                    class="secondary"
                    onClick={() => go({ selections: result.completion?.selections ?? selections })}
                  >
                    Use the suggestion
                  </button>
                </div>
              )}
              {result.quote ? (
                <table class="lines">
                  <caption class="visually-hidden">Quote lines in {currency}</caption>
                  <thead>
                    <tr>
                      <th scope="col">Product</th>
                      <th scope="col" class="num">
                        Qty
                      </th>
                      <th scope="col" class="num">
                        Unit
                      </th>
                      <th scope="col" class="num">
                        Total
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {result.quote.lines.flatMap((line, i) => [
                      <tr key={`${line.optionId}:${line.productId}`} data-line={line.productId}>
                        <th scope="row">
                          {productName(line) ?? <span class="mono">{line.productId}</span>}{' '}
                          <button
                            type="button"
                            class="link small"
                            aria-expanded={openTrace === i}
                            onClick={() => setOpenTrace(openTrace === i ? null : i)}
                          >
                            Trace<span class="visually-hidden"> of {line.productId}</span>
                          </button>
                          {productName(line) && <div class="small muted mono nowrap">{line.productId}</div>}
                        </th>
                        <td class="num">{line.quantity}</td>
                        <td class="num">{money(line.unitPrice, currency)}</td>
                        <td class="num">{money(line.total, currency)}</td>
                      </tr>,
                      openTrace === i && (
                        <tr key={`${line.optionId}:${line.productId}:trace`} class="detail">
                          <td colSpan={4}>
                            <ul class="plain trace small">
                              {traceWords(line.trace, currency).map((w) => (
                                <li key={w}>{w}</li>
                              ))}
                            </ul>
                          </td>
                        </tr>
                      ),
                    ])}
                  </tbody>
                  <tfoot>
                    <tr>
                      <th scope="row" colSpan={3}>
                        Total{result.complete ? '' : ' with the suggestion'}
                      </th>
                      <td class="num total" data-total>
                        {money(result.quote.total, currency)}
                      </td>
                    </tr>
                  </tfoot>
                </table>
              ) : (
                result.valid && (
                  <div>
                    <p class="muted">No price in {currency} for this configuration.</p>
                    {result.quoteProblems.length > 0 && (
                      <ul class="violations">
                        {result.quoteProblems.map((p) => (
                          <li key={`${p.pointer}:${p.message}`}>{p.message}</li>
                        ))}
                      </ul>
                    )}
                  </div>
                )
              )}
              {result.quote && result.completion && !session.readOnly && (
                <div class="actions">
                  <button type="button" disabled={saving} onClick={saveQuote}>
                    {saving
                      ? 'Saving…'
                      : result.complete
                        ? 'Save as quote'
                        : 'Save as quote, with the suggestion'}
                  </button>
                </div>
              )}
              <ProblemBanner problem={saveProblem} />
            </>
          )}
        </aside>
      </div>
    </section>
  );
}

import type { Schemas } from '@cpq/client';
import { useState } from 'preact/hooks';
import { OptionEditor } from '../editing/option-editor.tsx';
import { PriceEditor } from '../editing/price-editor.tsx';
import { type OptionChoice, RuleEditor } from '../editing/rule-editor.tsx';
import { adjustmentText, describeRule, money, type Names } from '../format.ts';
import { href, Link } from '../router.tsx';
import { call, type Problem, problemOf, type Session } from '../session.ts';
import { Loading, ProblemBanner, useLoad, usePageTitle } from '../ui.tsx';

type DetailOption = Schemas['BundleDetailOption'];

interface BundleData {
  bundle: Schemas['Bundle'];
  etag: string | null;
  details: Schemas['BundleDetails'];
  options: Schemas['BundleOption'][];
  rules: Schemas['Rule'][];
}

async function readBundle(session: Session, bundleId: string): Promise<BundleData> {
  const path = { params: { path: { bundleId } } };
  const [bundle, details, options, rules] = await Promise.all([
    call(session.api.GET('/v1/bundles/{bundleId}', path)),
    call(session.api.GET('/v1/bundles-details', { params: { query: { bundleIds: bundleId } } })),
    call(session.api.GET('/v1/bundles/{bundleId}/options', path)),
    call(session.api.GET('/v1/bundles/{bundleId}/rules', path)),
  ]);
  const detail = details.data.bundles[0];
  if (detail === undefined) throw new Error('the bundle was deleted while it was read');
  return {
    bundle: bundle.data,
    etag: bundle.etag,
    details: detail,
    options: options.data.options,
    rules: rules.data.rules,
  };
}

/** Every currency any product of the bundle has a price or adjustment in. */
export function currenciesOf(details: Schemas['BundleDetails']): string[] {
  const found = new Set<string>();
  for (const option of [...details.included, ...details.addOns]) {
    for (const product of option.products) {
      for (const prices of [product.listPrice, product.standardPrice, product.adjustments]) {
        for (const [currency, value] of Object.entries(prices)) if (value !== null) found.add(currency);
      }
    }
  }
  return [...found].sort();
}

function quantityText(configuration: Schemas['ProductConfiguration']): string {
  const { minQuantity: min, maxQuantity: max, readonlyQuantity } = configuration;
  const range =
    min === null && max === null ? 'any' : min === max ? String(min) : `${min ?? 0}–${max ?? '∞'}`;
  return readonlyQuantity ? `${range}, fixed` : range;
}

/** How many products an option takes, in words. */
export function countText({
  minCount: min,
  maxCount: max,
}: {
  minCount: number | null;
  maxCount: number | null;
}): string {
  if (min === null && max === null) return 'any number of products';
  if (min === max) return `exactly ${min} ${min === 1 ? 'product' : 'products'}`;
  if (max === null) return `at least ${min} ${min === 1 ? 'product' : 'products'}`;
  return `${min ?? 0} to ${max} products`;
}

type Editing =
  | { kind: 'prices'; optionId: string; productId: string }
  | { kind: 'option'; optionId: string }
  | { kind: 'rule'; ruleId: string | null }
  | null;

function OptionSection({
  option,
  plain,
  currencies,
  canEdit,
  editing,
  setEditing,
  session,
  bundleId,
  onSaved,
}: {
  option: DetailOption;
  plain: Schemas['BundleOption'] | undefined;
  currencies: string[];
  canEdit: boolean;
  editing: Editing;
  setEditing: (editing: Editing) => void;
  session: Session;
  bundleId: string;
  onSaved: () => void;
}) {
  const defaultProduct = option.products.find((p) => p.id === option.configuration.defaultOptionProductId);
  const close = (saved: boolean) => {
    setEditing(null);
    if (saved) onSaved();
  };
  const headingId = `option-${option.id}`;
  return (
    <section class="option" aria-labelledby={headingId} data-option={option.id}>
      <div class="section-head">
        <h2 id={headingId}>
          {option.name}{' '}
          <span class={plain?.type === 'INCLUDED' ? 'badge ok' : 'badge'}>
            {plain?.type === 'INCLUDED' ? 'Included' : 'Add-on'}
          </span>
        </h2>
        {canEdit && (
          <button
            type="button"
            class="secondary"
            onClick={() => setEditing({ kind: 'option', optionId: option.id })}
          >
            Edit settings<span class="visually-hidden"> of {option.name}</span>
          </button>
        )}
      </div>
      <p class="muted">
        Choose {countText(option.configuration)}
        {defaultProduct ? `; default ${defaultProduct.productId}` : ''}.
        {plain?.description ? ` ${plain.description}` : ''}
      </p>
      {editing?.kind === 'option' && editing.optionId === option.id && (
        <OptionEditor session={session} bundleId={bundleId} optionId={option.id} onClose={close} />
      )}
      {option.products.length === 0 ? (
        <p class="empty">No products in this option.</p>
      ) : (
        <div class="table-wrap">
          <table class="prices">
            <caption class="visually-hidden">Products and prices of {option.name}</caption>
            <thead>
              <tr>
                <th scope="col">Product</th>
                <th scope="col">Quantity</th>
                {currencies.map((currency) => (
                  <th scope="col" class="num" key={currency}>
                    {currency}
                  </th>
                ))}
                {canEdit && (
                  <th scope="col">
                    <span class="visually-hidden">Edit</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {option.products.map((product) => (
                <tr key={product.id} data-product={product.productId}>
                  <th scope="row">
                    <span class="mono">{product.productId}</span>
                    {Object.keys(product.properties).length > 0 && (
                      <div class="muted small">
                        {Object.entries(product.properties)
                          .map(([name, value]) => `${name}: ${value ?? '—'}`)
                          .join(' · ')}
                      </div>
                    )}
                  </th>
                  <td>{quantityText(product.configuration)}</td>
                  {currencies.map((currency) => {
                    const list = product.listPrice[currency] ?? null;
                    const standard = product.standardPrice[currency] ?? null;
                    const shown = list ?? standard;
                    const words = adjustmentText(product.adjustments[currency], currency, list);
                    return (
                      <td class="num price" key={currency} data-currency={currency}>
                        {shown === null ? (
                          <span class="muted">—</span>
                        ) : (
                          <span class="list">{money(shown, currency)}</span>
                        )}
                        {list !== null && standard !== null && standard !== list && (
                          <div class="muted small">standard {money(standard, currency)}</div>
                        )}
                        {words && <div class="adjustment small">{words}</div>}
                      </td>
                    );
                  })}
                  {canEdit && (
                    <td>
                      <button
                        type="button"
                        class="link"
                        onClick={() =>
                          setEditing({ kind: 'prices', optionId: option.id, productId: product.productId })
                        }
                      >
                        Edit prices<span class="visually-hidden"> of {product.productId}</span>
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {editing?.kind === 'prices' && editing.optionId === option.id && plain?.priceBookId && (
        <PriceEditor
          key={editing.productId}
          session={session}
          priceBookId={plain.priceBookId}
          productId={editing.productId}
          optionName={option.name}
          currencies={currencies}
          onClose={close}
        />
      )}
    </section>
  );
}

export function BundlePage({ bundleId, session }: { bundleId: string; session: Session }) {
  const loaded = useLoad(() => readBundle(session, bundleId), [bundleId]);
  const [editing, setEditing] = useState<Editing>(null);
  const [saved, setSaved] = useState('');
  const [problem, setProblem] = useState<Problem | null>(null);
  usePageTitle(loaded.data ? `Bundle ${loaded.data.bundle.header.productId}` : 'Bundle');
  const data = loaded.data;
  if (data === undefined) {
    return loaded.problem ? (
      <section>
        <h1>Bundle</h1>
        <ProblemBanner problem={loaded.problem} />
        <Link to={href('/bundles')}>Back to the bundles</Link>
      </section>
    ) : (
      <Loading what="the bundle" />
    );
  }
  const { bundle, details, options, rules } = data;
  const canEdit = !session.readOnly;
  const currencies = currenciesOf(details);
  const allOptions = [...details.included, ...details.addOns];
  const plainOf = new Map(options.map((o) => [o.id, o]));
  const names: Names = { option: (id) => plainOf.get(id)?.name ?? id };
  const choices: OptionChoice[] = allOptions.map((o) => ({
    id: o.id,
    name: o.name,
    products: o.products.map((p) => p.productId),
  }));
  const onSaved = () => {
    setSaved('Saved.');
    loaded.reload();
  };
  const toggleActive = async () => {
    try {
      await call(
        session.api.PATCH('/v1/bundles/{bundleId}', {
          params: { path: { bundleId }, header: data.etag ? { 'if-match': data.etag } : {} },
          body: { isActive: !bundle.isActive },
        }),
      );
      setProblem(null);
      onSaved();
    } catch (error) {
      const found = problemOf(error);
      setProblem(
        found.status === 412
          ? {
              ...found,
              detail: 'Someone else changed this bundle since the page was loaded; it has been reloaded.',
            }
          : found,
      );
      if (found.status === 412) loaded.reload();
    }
  };
  return (
    <section class="bundle">
      <nav class="crumbs" aria-label="Breadcrumb">
        <Link to={href('/bundles')}>Bundles</Link> /{' '}
        <span aria-current="page">{bundle.header.productId}</span>
      </nav>
      <div class="section-head">
        <h1>
          {bundle.header.productId}{' '}
          <span class={bundle.isActive ? 'badge ok' : 'badge'}>
            {bundle.isActive ? 'Active' : 'Inactive'}
          </span>
        </h1>
        <div class="actions">
          <Link class="button" to={href(`/bundles/${encodeURIComponent(bundleId)}/quote`)}>
            Build a quote
          </Link>
          {canEdit && (
            <button type="button" class="secondary" onClick={toggleActive}>
              {bundle.isActive ? 'Deactivate' : 'Activate'}
            </button>
          )}
        </div>
      </div>
      <p class="muted">
        <span class="mono">{bundle.id}</span>
        {bundle.clonedBundleTempName && ` · ${bundle.clonedBundleTempName}`}
        {Object.entries(bundle.header.properties).map(([name, value]) => ` · ${name}: ${value ?? '—'}`)}
        {currencies.length > 0 && ` · prices in ${currencies.join(', ')}`}
      </p>
      <p class="status" aria-live="polite">
        {saved}
      </p>
      <ProblemBanner problem={problem ?? loaded.problem} />
      {allOptions.map((option) => (
        <OptionSection
          key={option.id}
          option={option}
          plain={plainOf.get(option.id)}
          currencies={currencies}
          canEdit={canEdit}
          editing={editing}
          setEditing={(next) => {
            setSaved('');
            setEditing(next);
          }}
          session={session}
          bundleId={bundleId}
          onSaved={onSaved}
        />
      ))}
      <section class="rules" aria-labelledby="rules-heading">
        <div class="section-head">
          <h2 id="rules-heading">Rules</h2>
          {canEdit && allOptions.length > 0 && (
            <button
              type="button"
              class="secondary"
              onClick={() => setEditing({ kind: 'rule', ruleId: null })}
            >
              New rule
            </button>
          )}
        </div>
        {editing?.kind === 'rule' && editing.ruleId === null && (
          <RuleEditor
            session={session}
            bundleId={bundleId}
            ruleId={null}
            options={choices}
            names={names}
            onClose={(done) => {
              setEditing(null);
              if (done) onSaved();
            }}
          />
        )}
        {rules.length === 0 ? (
          <p class="empty">No rules: every combination the options allow is valid.</p>
        ) : (
          <ol class="rule-list">
            {rules.map((rule) => (
              <li key={rule.id} data-rule={rule.id}>
                <div class="section-head">
                  <div>
                    <strong>{rule.name}</strong> {!rule.isActive && <span class="badge">Inactive</span>}
                    <div>{describeRule(rule, names)}</div>
                    {rule.message && <div class="muted">“{rule.message}”</div>}
                  </div>
                  {canEdit && (
                    <button
                      type="button"
                      class="secondary"
                      onClick={() => setEditing({ kind: 'rule', ruleId: rule.id })}
                    >
                      Edit<span class="visually-hidden"> rule {rule.name}</span>
                    </button>
                  )}
                </div>
                {editing?.kind === 'rule' && editing.ruleId === rule.id && (
                  <RuleEditor
                    session={session}
                    bundleId={bundleId}
                    ruleId={rule.id}
                    options={choices}
                    names={names}
                    onClose={(done) => {
                      setEditing(null);
                      if (done) onSaved();
                    }}
                  />
                )}
              </li>
            ))}
          </ol>
        )}
      </section>
    </section>
  );
}

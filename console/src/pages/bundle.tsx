import type { Schemas } from '@cpq/client';
import { useState } from 'preact/hooks';
import { AddProductForm, NewOptionForm } from '../editing/authoring.tsx';
import { OptionEditor } from '../editing/option-editor.tsx';
import { PriceBookTools } from '../editing/price-book-tools.tsx';
import { PriceEditor } from '../editing/price-editor.tsx';
import { type OptionChoice, RuleEditor } from '../editing/rule-editor.tsx';
import {
  adjustmentText,
  describeRule,
  finerThanCurrency,
  money,
  type Names,
  productName,
} from '../format.ts';
import { href, Link, navigate } from '../router.tsx';
import { call, type Problem, problemOf, type Session } from '../session.ts';
import { ConfirmDelete, Loading, ProblemBanner, useLoad, usePageTitle } from '../ui.tsx';

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

/** A rule's body, to create a copy of it beside it. */
function ruleCopy(rule: Schemas['Rule']): Schemas['RuleBody'] {
  const { id, accountId, bundleId, createdAt, updatedAt, displayOrder, name, ...body } = rule;
  return { ...body, name: `${name} (copy)`.slice(0, 200) };
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
  | { kind: 'pricebook'; optionId: string }
  | { kind: 'new-option' }
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
  act,
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
  act: (work: () => Promise<unknown>, done: string) => Promise<void>;
}) {
  const nameOf = (productId: string) => {
    const product = option.products.find((p) => p.productId === productId);
    return product ? productName(product) : productId;
  };
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
          <div class="actions">
            <button
              type="button"
              class="secondary"
              onClick={() => setEditing({ kind: 'option', optionId: option.id })}
            >
              Edit settings<span class="visually-hidden"> of {option.name}</span>
            </button>
            {plain?.priceBookId && (
              <button
                type="button"
                class="secondary"
                onClick={() => setEditing({ kind: 'pricebook', optionId: option.id })}
              >
                Change prices<span class="visually-hidden"> of {option.name}</span>
              </button>
            )}
            <button
              type="button"
              class="secondary"
              onClick={() =>
                act(
                  () =>
                    call(
                      session.api.POST('/v1/bundles/{bundleId}/options/{optionId}/clone', {
                        params: { path: { bundleId, optionId: option.id } },
                      }),
                    ),
                  `Copied ${option.name} as “${option.name} (copy)”, with its products and prices.`,
                )
              }
            >
              Clone<span class="visually-hidden"> {option.name}</span>
            </button>
            <ConfirmDelete
              what={`the option ${option.name}`}
              consequence="Its products, their prices and the rules' mentions of it go with it."
              onConfirm={() =>
                act(
                  () =>
                    call(
                      session.api.DELETE('/v1/bundles/{bundleId}/options/{optionId}', {
                        params: { path: { bundleId, optionId: option.id } },
                      }),
                    ),
                  `Deleted the option ${option.name}.`,
                )
              }
            />
          </div>
        )}
      </div>
      <p class="muted">
        Choose {countText(option.configuration)}
        {defaultProduct ? `; default ${productName(defaultProduct)}` : ''}.
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
                    {product.properties.name ? (
                      <>
                        {product.properties.name}
                        <div class="muted small mono">{product.productId}</div>
                      </>
                    ) : (
                      <span class="mono">{product.productId}</span>
                    )}
                    {Object.keys(product.properties).some((name) => name !== 'name') && (
                      <div class="muted small">
                        {Object.entries(product.properties)
                          .filter(([name]) => name !== 'name')
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
                        {shown !== null && finerThanCurrency(shown, currency) && (
                          <div class="muted small finer">{finerThanCurrency(shown, currency)}</div>
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
                        Edit prices<span class="visually-hidden"> of {productName(product)}</span>
                      </button>
                      <ConfirmDelete
                        label="Remove"
                        what={`${productName(product)} from ${option.name}`}
                        consequence="Its prices in this option go with it."
                        onConfirm={() =>
                          act(
                            () =>
                              call(
                                session.api.DELETE('/v1/bundles/{bundleId}/options/{optionId}/{productId}', {
                                  params: {
                                    path: { bundleId, optionId: option.id, productId: product.productId },
                                  },
                                }),
                              ),
                            `Removed ${productName(product)} from ${option.name}.`,
                          )
                        }
                      />
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {canEdit && plain && (
        <AddProductForm
          session={session}
          bundleId={bundleId}
          option={plain}
          onAdded={() => act(async () => null, 'Added the product.')}
        />
      )}
      {editing?.kind === 'pricebook' && editing.optionId === option.id && plain?.priceBookId && (
        <PriceBookTools
          session={session}
          priceBookId={plain.priceBookId}
          optionName={option.name}
          currencies={currencies}
          nameOf={nameOf}
          onChanged={onSaved}
          onClose={() => close(false)}
        />
      )}
      {editing?.kind === 'prices' && editing.optionId === option.id && plain?.priceBookId && (
        <PriceEditor
          key={editing.productId}
          session={session}
          priceBookId={plain.priceBookId}
          productId={editing.productId}
          productName={nameOf(editing.productId)}
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
  const bundleName = bundle.header.properties.name ?? bundle.header.productId;
  const canEdit = !session.readOnly;
  const currencies = currenciesOf(details);
  const allOptions = [...details.included, ...details.addOns];
  const plainOf = new Map(options.map((o) => [o.id, o]));
  const names: Names = {
    option: (id) => plainOf.get(id)?.name ?? id,
    product: (optionId, productId) => {
      const product = allOptions
        .find((o) => o.id === optionId)
        ?.products.find((p) => p.productId === productId);
      return product ? productName(product) : productId;
    },
  };
  const choices: OptionChoice[] = allOptions.map((o) => ({
    id: o.id,
    name: o.name,
    products: o.products.map((p) => p.productId),
  }));
  const onSaved = () => {
    setSaved('Saved.');
    loaded.reload();
  };
  /** One authoring request: on success its message and a reload, else its problem. */
  const act = async (work: () => Promise<unknown>, done: string) => {
    try {
      await work();
      setProblem(null);
      setEditing(null);
      setSaved(done);
      loaded.reload();
    } catch (error) {
      setSaved('');
      setProblem(problemOf(error));
    }
  };
  const cloneBundle = async () => {
    try {
      const { data: copy } = await call(
        session.api.POST('/v1/bundles/{bundleId}/clone', { params: { path: { bundleId } }, body: {} }),
      );
      navigate(href(`/bundles/${encodeURIComponent(copy.id)}`));
    } catch (error) {
      setProblem(problemOf(error));
    }
  };
  const deleteBundle = async () => {
    try {
      await call(session.api.DELETE('/v1/bundles/{bundleId}', { params: { path: { bundleId } } }));
      navigate(href('/bundles'));
    } catch (error) {
      setProblem(problemOf(error));
    }
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
        <Link to={href('/bundles')}>Bundles</Link> / <span aria-current="page">{bundleName}</span>
      </nav>
      <div class="section-head">
        <h1>
          {bundleName}{' '}
          {bundleName !== bundle.header.productId && (
            <span class="mono muted heading-id">{bundle.header.productId}</span>
          )}{' '}
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
          {canEdit && (
            <button type="button" class="secondary" onClick={cloneBundle}>
              Clone<span class="visually-hidden"> the bundle</span>
            </button>
          )}
          {canEdit && (
            <ConfirmDelete
              what={`the bundle ${bundleName}`}
              consequence="Its options, products, prices and rules go with it."
              onConfirm={deleteBundle}
            />
          )}
        </div>
      </div>
      <p class="muted">
        <span class="mono">{bundle.id}</span>
        {bundle.clonedBundleTempName && ` · ${bundle.clonedBundleTempName}`}
        {Object.entries(bundle.header.properties)
          .filter(([name]) => name !== 'name')
          .map(([name, value]) => ` · ${name}: ${value ?? '—'}`)}
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
          act={act}
        />
      ))}
      {canEdit &&
        (editing?.kind === 'new-option' ? (
          <NewOptionForm
            session={session}
            bundleId={bundleId}
            onMade={() => act(async () => null, 'Created the option.')}
            onCancel={() => setEditing(null)}
          />
        ) : (
          <div class="actions">
            <button type="button" class="secondary" onClick={() => setEditing({ kind: 'new-option' })}>
              New option
            </button>
          </div>
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
                    <div class="actions">
                      <button
                        type="button"
                        class="secondary"
                        onClick={() => setEditing({ kind: 'rule', ruleId: rule.id })}
                      >
                        Edit<span class="visually-hidden"> rule {rule.name}</span>
                      </button>
                      <button
                        type="button"
                        class="secondary"
                        onClick={() =>
                          act(
                            () =>
                              call(
                                session.api.POST('/v1/bundles/{bundleId}/rules', {
                                  params: { path: { bundleId } },
                                  body: { ...ruleCopy(rule), isActive: false },
                                }),
                              ),
                            `Copied the rule ${rule.name}; the copy is inactive until you activate it.`,
                          )
                        }
                      >
                        Clone<span class="visually-hidden"> rule {rule.name}</span>
                      </button>
                      <ConfirmDelete
                        what={`the rule ${rule.name}`}
                        onConfirm={() =>
                          act(
                            () =>
                              call(
                                session.api.DELETE('/v1/bundles/{bundleId}/rules/{ruleId}', {
                                  params: { path: { bundleId, ruleId: rule.id } },
                                }),
                              ),
                            `Deleted the rule ${rule.name}.`,
                          )
                        }
                      />
                    </div>
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

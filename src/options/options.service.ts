import { findBundle } from '../bundles/bundles.repository.ts';
import type { Executor } from '../db/database.ts';
import { type ExpectedVersions, lockBundle, lockRoot, type Versioned } from '../db/roots.ts';
import { readSnapshot } from '../db/snapshot.ts';
import { recordEvent } from '../events/outbox.ts';
import type { PriceBook } from '../price-books/price-books.schemas.ts';
import { bodyItem, notFound, throwIfConflicts, throwIfProblems } from '../problems.ts';
import { removeFromRules } from '../rules/rule-references.ts';
import type { RequestScope } from '../shared/scope.ts';
import { copyOptions } from './option-copy.ts';
import {
  insertOption,
  optionCreateConflicts,
  optionCreateProblems,
  productConflicts,
  productRows,
  productRuleProblems,
  rangeProblem,
} from './option-create.ts';
import {
  deleteOptionProductRow,
  deleteOptionRow,
  findOption,
  findOptionProduct,
  findOptionProductById,
  insertCatalogueRows,
  listOptionsOfBundle,
  listProductsOfOption,
  nextOptionDisplayOrder,
  nextProductDisplayOrder,
  type OptionProductRow,
  type OptionRow,
  storedProperties,
  toOption,
  toOptionProduct,
  updateOptionProductRow,
  updateOptionRow,
} from './options.repository.ts';
import type {
  BundleOption,
  BundleOptionWithProducts,
  OptionCreateBody,
  OptionProduct,
  OptionProductInput,
  OptionProductUpdateBody,
  OptionUpdateBody,
} from './options.schemas.ts';

async function requireOption(
  db: Executor,
  accountId: string,
  bundleId: string,
  optionId: string,
): Promise<OptionRow> {
  const option = await findOption(db, accountId, bundleId, optionId);
  if (!option) throw notFound(`Option ${optionId} of bundle`, bundleId);
  return option;
}

/** Opens a write to an option (see lockRoot): 404 when the bundle has no such option, 412 when If-Match is stale. */
async function lockOption(
  tx: Executor,
  accountId: string,
  bundleId: string,
  optionId: string,
  expected: ExpectedVersions,
): Promise<OptionRow> {
  const option = await lockRoot(tx, 'bundle_options', { accountId, id: optionId, bundleId }, expected);
  if (!option) throw notFound(`Option ${optionId} of bundle`, bundleId);
  return option;
}

async function withProducts(db: Executor, option: OptionRow): Promise<BundleOptionWithProducts> {
  const products = await listProductsOfOption(db, option.account_id, option.id);
  return { ...toOption(option), products: products.map(toOptionProduct) };
}

export async function createOption(
  scope: RequestScope,
  { bundleId, body }: { bundleId: string; body: OptionCreateBody },
): Promise<Versioned<BundleOption>> {
  const { db } = scope;
  const accountId = scope.account.id;
  return db.transaction().execute(async (tx) => {
    if (!(await lockBundle(tx, accountId, bundleId))) throw notFound('Bundle', bundleId);
    throwIfProblems(optionCreateProblems(body, ''));
    throwIfConflicts(optionCreateConflicts(body, ''));
    const displayOrder = body.displayOrder ?? (await nextOptionDisplayOrder(tx, accountId, bundleId));
    const { option } = await insertOption(
      tx,
      accountId,
      bundleId,
      body,
      displayOrder,
      scope.now().toISOString(),
    );
    const value = toOption(option);
    await recordEvent(scope, tx, 'option.created', value);
    return { value, version: option.version };
  });
}

export async function listOptions(
  scope: RequestScope,
  bundleId: string,
): Promise<{ options: BundleOption[] }> {
  const { db } = scope;
  const accountId = scope.account.id;
  if (!(await findBundle(db, accountId, bundleId))) throw notFound('Bundle', bundleId);
  return { options: (await listOptionsOfBundle(db, accountId, bundleId)).map(toOption) };
}

export async function getOption(
  scope: RequestScope,
  { bundleId, optionId }: { bundleId: string; optionId: string },
): Promise<Versioned<BundleOptionWithProducts>> {
  const { db } = scope;
  const accountId = scope.account.id;
  return readSnapshot(db, async (tx) => {
    const option = await requireOption(tx, accountId, bundleId, optionId);
    return { value: await withProducts(tx, option), version: option.version };
  });
}

export async function updateOption(
  scope: RequestScope,
  {
    bundleId,
    optionId,
    body,
    expected,
  }: { bundleId: string; optionId: string; body: OptionUpdateBody; expected: ExpectedVersions },
): Promise<Versioned<BundleOption>> {
  const { db } = scope;
  const accountId = scope.account.id;
  return db.transaction().execute(async (tx) => {
    const current = await lockOption(tx, accountId, bundleId, optionId, expected);
    const given = body.configuration ?? {};
    const minCount = given.minCount === undefined ? current.min_count : given.minCount;
    const maxCount = given.maxCount === undefined ? current.max_count : given.maxCount;
    const problems = rangeProblem(
      minCount,
      maxCount,
      given.minCount === undefined ? '/configuration/maxCount' : '/configuration/minCount',
      'minCount',
    );
    const defaultId = given.defaultOptionProductId;
    if (defaultId != null) {
      const owner = await findOptionProductById(tx, accountId, defaultId);
      const at = '/configuration/defaultOptionProductId';
      if (!owner)
        problems.push(bodyItem('unknown_reference', at, `option product ${defaultId} does not exist`));
      else if (owner.option_id !== optionId) {
        problems.push(
          bodyItem('default_product_not_in_option', at, `${defaultId} is a product of another option`),
        );
      }
    }
    throwIfProblems(problems);
    const now = scope.now().toISOString();
    const updated: OptionRow = {
      ...current,
      name: body.name ?? current.name,
      description: body.description === undefined ? current.description : body.description,
      type: body.type ?? current.type,
      display_order: body.displayOrder ?? current.display_order,
      min_count: minCount,
      max_count: maxCount,
      default_option_product_id: defaultId === undefined ? current.default_option_product_id : defaultId,
      updated_at: now,
    };
    await updateOptionRow(tx, accountId, optionId, updated);
    const value = toOption(updated);
    await recordEvent(scope, tx, 'option.updated', value);
    return { value, version: updated.version };
  });
}

/** Deletes the option; the cascades take its products, its price books and their entries; rules lose it. */
export async function deleteOption(
  scope: RequestScope,
  { bundleId, optionId, expected }: { bundleId: string; optionId: string; expected: ExpectedVersions },
): Promise<void> {
  const { db } = scope;
  const accountId = scope.account.id;
  await db.transaction().execute(async (tx) => {
    await lockOption(tx, accountId, bundleId, optionId, expected);
    await deleteOptionRow(tx, accountId, optionId);
    await removeFromRules(scope, tx, bundleId, { optionId });
    await recordEvent(scope, tx, 'option.deleted', { id: optionId, deleted: true });
  });
}

export async function cloneOption(
  scope: RequestScope,
  { bundleId, optionId }: { bundleId: string; optionId: string },
): Promise<Versioned<{ option: BundleOptionWithProducts; priceBook: PriceBook }>> {
  const { db } = scope;
  const accountId = scope.account.id;
  return db.transaction().execute(async (tx) => {
    // The copy is a write to the bundle; the source is only read, but under the bundle's lock, so it is whole.
    if (!(await lockBundle(tx, accountId, bundleId)))
      throw notFound(`Option ${optionId} of bundle`, bundleId);
    const source = await requireOption(tx, accountId, bundleId, optionId);
    const displayOrder = await nextOptionDisplayOrder(tx, accountId, bundleId);
    const copy = await copyOptions(tx, accountId, [source], {
      bundleId,
      priceBooks: 'current',
      now: scope.now().toISOString(),
      rename: (name) => `${name} (copy)`,
      displayOrder: () => displayOrder,
    });
    const [option] = copy.options;
    const [priceBook] = copy.priceBooks;
    if (!option || !priceBook) throw new Error(`option ${optionId} has no current price book to copy`);
    const value = { option: await withProducts(tx, option), priceBook };
    await recordEvent(scope, tx, 'option.cloned', value.option);
    return { value, version: option.version };
  });
}

/** The option's products after a change to them, recorded as the change's event. */
async function productsChanged(
  scope: RequestScope,
  tx: Executor,
  bundleId: string,
  optionId: string,
): Promise<OptionProduct[]> {
  const products = (await listProductsOfOption(tx, scope.account.id, optionId)).map(toOptionProduct);
  await recordEvent(scope, tx, 'option_products.changed', { id: optionId, bundleId, products });
  return products;
}

export async function addOptionProducts(
  scope: RequestScope,
  { bundleId, optionId, products }: { bundleId: string; optionId: string; products: OptionProductInput[] },
): Promise<Versioned<OptionProduct[]>> {
  const { db } = scope;
  const accountId = scope.account.id;
  return db.transaction().execute(async (tx) => {
    const option = await lockOption(tx, accountId, bundleId, optionId, null);
    throwIfProblems(productRuleProblems(products, ''));
    const existing = await listProductsOfOption(tx, accountId, optionId);
    throwIfConflicts(productConflicts(products, new Set(existing.map((p) => p.product_id)), ''));
    const first = await nextProductDisplayOrder(tx, accountId, optionId);
    const now = option.updated_at;
    await insertCatalogueRows(
      tx,
      'option_products',
      productRows(accountId, { bundleId, optionId }, products, first, now),
    );
    return { value: await productsChanged(scope, tx, bundleId, optionId), version: option.version };
  });
}

async function requireOptionProduct(
  db: Executor,
  accountId: string,
  optionId: string,
  productId: string,
): Promise<OptionProductRow> {
  const product = await findOptionProduct(db, accountId, optionId, productId);
  if (!product) throw notFound(`Product ${productId} of option`, optionId);
  return product;
}

export async function updateOptionProduct(
  scope: RequestScope,
  {
    path,
    body,
    expected,
  }: {
    path: { bundleId: string; optionId: string; productId: string };
    body: OptionProductUpdateBody;
    expected: ExpectedVersions;
  },
): Promise<Versioned<OptionProduct>> {
  const { db } = scope;
  const accountId = scope.account.id;
  return db.transaction().execute(async (tx) => {
    const option = await lockOption(tx, accountId, path.bundleId, path.optionId, expected);
    const current = await requireOptionProduct(tx, accountId, path.optionId, path.productId);
    const given = body.configuration ?? {};
    const minQuantity = given.minQuantity === undefined ? current.min_quantity : given.minQuantity;
    const maxQuantity = given.maxQuantity === undefined ? current.max_quantity : given.maxQuantity;
    throwIfProblems(
      rangeProblem(
        minQuantity,
        maxQuantity,
        given.minQuantity === undefined ? '/configuration/maxQuantity' : '/configuration/minQuantity',
        'minQuantity',
      ),
    );
    const updated: OptionProductRow = {
      ...current,
      ...(body.properties === undefined ? {} : storedProperties(current.product_id, body.properties)),
      display_order: body.displayOrder ?? current.display_order,
      min_quantity: minQuantity,
      max_quantity: maxQuantity,
      readonly_quantity:
        given.readonlyQuantity === undefined ? current.readonly_quantity : given.readonlyQuantity,
      version: current.version + 1,
      updated_at: option.updated_at,
    };
    await updateOptionProductRow(tx, accountId, current.id, updated);
    await productsChanged(scope, tx, path.bundleId, path.optionId);
    return { value: toOptionProduct(updated), version: option.version };
  });
}

/**
 * Removes a product from an option; the cascades remove its entries in the option's price books, and rules lose
 * it. An option whose default it was is left without a default rather than pointing at nothing.
 */
export async function removeOptionProduct(
  scope: RequestScope,
  {
    path,
    expected,
  }: { path: { bundleId: string; optionId: string; productId: string }; expected: ExpectedVersions },
): Promise<Versioned<OptionProduct[]>> {
  const { db } = scope;
  const accountId = scope.account.id;
  return db.transaction().execute(async (tx) => {
    const option = await lockOption(tx, accountId, path.bundleId, path.optionId, expected);
    const product = await requireOptionProduct(tx, accountId, path.optionId, path.productId);
    await deleteOptionProductRow(tx, accountId, product.id);
    if (option.default_option_product_id === product.id) {
      await updateOptionRow(tx, accountId, option.id, { default_option_product_id: null });
    }
    await removeFromRules(scope, tx, path.bundleId, {
      optionId: path.optionId,
      productId: path.productId,
    });
    return {
      value: await productsChanged(scope, tx, path.bundleId, path.optionId),
      version: option.version,
    };
  });
}

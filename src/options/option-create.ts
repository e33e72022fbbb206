// Creating options, alone or inline in a new bundle: the rules of a create body and the rows it becomes. The
// options and bundles services both create through here.
import type { Executor } from '../db/database.ts';
import { newId } from '../ids.ts';
import { insertPriceBook } from '../price-books/price-books.repository.ts';
import type { PriceBook } from '../price-books/price-books.schemas.ts';
import { bodyItem, type ProblemItem, pointer } from '../problems.ts';
import {
  insertCatalogueRows,
  type OptionProductRow,
  type OptionRow,
  storedProperties,
} from './options.repository.ts';
import { type OptionCreateBody, type OptionProductInput, placedOrders } from './options.schemas.ts';

export function rangeProblem(
  min: number | null | undefined,
  max: number | null | undefined,
  at: string,
  what: string,
): ProblemItem[] {
  if (min == null || max == null || min <= max) return [];
  return [bodyItem('min_greater_than_max', at, `${what} ${min} is greater than the maximum ${max}`)];
}

export function productRuleProblems(products: OptionProductInput[], at: string): ProblemItem[] {
  return products.flatMap((product, i) =>
    rangeProblem(
      product.configuration?.minQuantity,
      product.configuration?.maxQuantity,
      `${at}${pointer(i, 'configuration', 'minQuantity')}`,
      'minQuantity',
    ),
  );
}

/** A productId may appear once in an option: repeats within the body, or of products it already holds. */
export function productConflicts(
  products: OptionProductInput[],
  existing: Set<string>,
  at: string,
): ProblemItem[] {
  const seen = new Set(existing);
  const conflicts: ProblemItem[] = [];
  products.forEach((product, i) => {
    if (seen.has(product.productId)) {
      conflicts.push(
        bodyItem(
          'duplicate_product',
          `${at}${pointer(i, 'productId')}`,
          existing.has(product.productId)
            ? `product ${product.productId} is already in the option`
            : `product ${product.productId} is given more than once`,
        ),
      );
    }
    seen.add(product.productId);
  });
  return conflicts;
}

/**
 * Every problem of an option-create body, pointers prefixed with `at` (the body itself, or one of a bundle's
 * inline options). A default product cannot name one of the products being created, whose ids do not exist
 * yet, so any defaultOptionProductId on create is refused: it is set with PUT once the products exist.
 */
export function optionCreateProblems(body: OptionCreateBody, at: string): ProblemItem[] {
  const problems = rangeProblem(
    body.configuration?.minCount,
    body.configuration?.maxCount,
    `${at}/configuration/minCount`,
    'minCount',
  );
  if (body.configuration?.defaultOptionProductId != null) {
    problems.push(
      bodyItem(
        'default_product_not_in_option',
        `${at}/configuration/defaultOptionProductId`,
        'a new option has no products yet to be its default; set it with PUT after creating the option',
      ),
    );
  }
  problems.push(...productRuleProblems(body.products ?? [], `${at}/products`));
  return problems;
}

export function optionCreateConflicts(body: OptionCreateBody, at: string): ProblemItem[] {
  return productConflicts(body.products ?? [], new Set(), `${at}/products`);
}

export function productRows(
  accountId: string,
  option: { bundleId: string; optionId: string },
  products: OptionProductInput[],
  firstDisplayOrder: number,
  now: string,
): OptionProductRow[] {
  const orders = placedOrders(products, firstDisplayOrder);
  return products.map((product, i) => ({
    account_id: accountId,
    id: newId('optionProduct'),
    bundle_id: option.bundleId,
    option_id: option.optionId,
    product_id: product.productId,
    ...storedProperties(product.productId, product.properties ?? {}),
    display_order: orders[i] as number,
    min_quantity: product.configuration?.minQuantity ?? null,
    max_quantity: product.configuration?.maxQuantity ?? null,
    readonly_quantity: product.configuration?.readonlyQuantity ?? null,
    version: 1,
    created_at: now,
    updated_at: now,
  }));
}

/**
 * Inserts an option already checked with optionCreateProblems, its products and its first price book, named
 * after the option. Runs inside the caller's transaction. The option is written pointing at its book from the
 * start (the id is not a foreign key), so a new option is at version 1.
 */
export async function insertOption(
  tx: Executor,
  accountId: string,
  bundleId: string,
  body: OptionCreateBody,
  displayOrder: number,
  now: string,
): Promise<{ option: OptionRow; priceBook: PriceBook }> {
  const priceBookId = newId('priceBook');
  const option: OptionRow = {
    account_id: accountId,
    id: newId('option'),
    bundle_id: bundleId,
    type: body.type ?? 'ADD_ON',
    name: body.name,
    description: body.description ?? null,
    display_order: displayOrder,
    min_count: body.configuration?.minCount ?? null,
    max_count: body.configuration?.maxCount ?? null,
    default_option_product_id: null,
    price_book_id: priceBookId,
    version: 1,
    created_at: now,
    updated_at: now,
  };
  await insertCatalogueRows(tx, 'bundle_options', [option]);
  await insertCatalogueRows(
    tx,
    'option_products',
    productRows(accountId, { bundleId, optionId: option.id }, body.products ?? [], 0, now),
  );
  const priceBook = await insertPriceBook(
    tx,
    {
      accountId,
      id: priceBookId,
      bundleOptionId: option.id,
      name: option.name,
      description: null,
      effectiveStartDate: null,
      effectiveEndDate: null,
    },
    now,
  );
  return { option, priceBook };
}

// Pure: a product's variant table, from its variant definition and its per-currency adjustments.
import { type Adjustment, MAX_VARIANT_ID_LENGTH } from '../pricing/adjustment.schema.ts';
import type { Violation } from '../pricing/adjustments.ts';
import {
  MAX_DYNAMIC_VARIANTS,
  MAX_VARIANT_TABLE_CHARACTERS,
  type ProductVariantsBody,
  type ProductVariantTable,
} from './price-books.schemas.ts';

export type VariantDefinition = ProductVariantsBody;

/** The {name} placeholders of a template, in order of first appearance, each once. */
export function templateTokens(template: string): string[] {
  return [...new Set(Array.from(template.matchAll(/\{([^{}]*)\}/g), (m) => m[1] ?? ''))];
}

interface Variant {
  variantId: string;
  properties: Record<string, string>;
}

function combinations(definition: VariantDefinition): Variant[] {
  const tokens = templateTokens(definition.template);
  const valuesOf = new Map(definition.properties.map((p) => [p.name, p.values]));
  let partial: Record<string, string>[] = [{}];
  for (const token of tokens) {
    const values = valuesOf.get(token) ?? [];
    partial = partial.flatMap((chosen) => values.map((value) => ({ ...chosen, [token]: value })));
  }
  return partial.map((properties) => ({
    variantId: definition.template.replace(/\{([^{}]*)\}/g, (_, token: string) => properties[token] ?? ''),
    properties,
  }));
}

function combinationCount(definition: VariantDefinition): number {
  const valuesOf = new Map(definition.properties.map((p) => [p.name, p.values.length]));
  return templateTokens(definition.template).reduce((n, token) => n * (valuesOf.get(token) ?? 0), 1);
}

const characters = (text: string) => [...text].length;

/**
 * The longest variant id and the characters of all of them together, worked out from the template without making
 * a single id: each placeholder, wherever it appears, adds its longest value to the longest id, and each of its
 * values appears in count / (its number of values) of the ids.
 */
function variantIdSizes(definition: VariantDefinition, count: number): { longest: number; total: number } {
  const valuesOf = new Map(definition.properties.map((p) => [p.name, p.values.map(characters)]));
  const literal = characters(definition.template.replace(/\{[^{}]*\}/g, ''));
  let longest = literal;
  let total = literal * count;
  for (const match of definition.template.matchAll(/\{([^{}]*)\}/g)) {
    const lengths = valuesOf.get(match[1] ?? '') ?? [];
    longest += Math.max(0, ...lengths);
    total += (lengths.reduce((sum, n) => sum + n, 0) * count) / Math.max(1, lengths.length);
  }
  return { longest, total };
}

/**
 * Rules across a definition's fields (each a 422): unique property names and values, tokens naming properties, for a
 * dynamic table every property in its template (else the variant ids would not be distinct), bounded combinations, ids
 * of bounded length and total size, and distinct variant ids.
 */
export function validateVariantDefinition(definition: VariantDefinition): Violation[] {
  const out: Violation[] = [];
  const names = new Map<string, number>();
  definition.properties.forEach((property, i) => {
    const earlier = names.get(property.name);
    if (earlier !== undefined) {
      out.push({
        code: 'duplicate_property',
        pointer: `/properties/${i}/name`,
        message: `property ${JSON.stringify(property.name)} already appears at /properties/${earlier}`,
      });
    } else {
      names.set(property.name, i);
    }
    const seen = new Set<string>();
    property.values.forEach((value, j) => {
      if (seen.has(value)) {
        out.push({
          code: 'duplicate_value',
          pointer: `/properties/${i}/values/${j}`,
          message: `value ${JSON.stringify(value)} is listed twice`,
        });
      }
      seen.add(value);
    });
  });
  const tokens = templateTokens(definition.template);
  for (const token of tokens) {
    if (!names.has(token)) {
      out.push({
        code: 'unknown_token',
        pointer: '/template',
        message: `placeholder {${token}} does not name a property`,
      });
    }
  }
  if (!definition.isDynamic || out.length > 0) return out;
  definition.properties.forEach((property, i) => {
    if (!tokens.includes(property.name)) {
      out.push({
        code: 'unused_property',
        pointer: `/properties/${i}/name`,
        message: `property ${JSON.stringify(property.name)} has no placeholder in the template`,
      });
    }
  });
  const count = combinationCount(definition);
  if (count > MAX_DYNAMIC_VARIANTS) {
    out.push({
      code: 'too_many_variants',
      pointer: '/properties',
      message: `the properties make ${count} combinations; at most ${MAX_DYNAMIC_VARIANTS} are allowed`,
    });
    return out;
  }
  const { longest, total } = variantIdSizes(definition, count);
  if (longest > MAX_VARIANT_ID_LENGTH) {
    out.push({
      code: 'variant_id_too_long',
      pointer: '/template',
      message: `the longest variant id would have ${longest} characters; at most ${MAX_VARIANT_ID_LENGTH} are allowed`,
    });
  }
  if (total > MAX_VARIANT_TABLE_CHARACTERS) {
    out.push({
      code: 'variant_table_too_large',
      pointer: '/properties',
      message:
        `the variant ids would have ${total} characters together; at most ${MAX_VARIANT_TABLE_CHARACTERS} are ` +
        'allowed',
    });
  }
  if (out.length > 0) return out;
  const ids = new Set<string>();
  for (const { variantId } of combinations(definition)) {
    if (ids.has(variantId)) {
      out.push({
        code: 'duplicate_variant',
        pointer: '/template',
        message: `two combinations make the same variant id ${JSON.stringify(variantId)}`,
      });
      break;
    }
    ids.add(variantId);
  }
  return out;
}

type VariantAdjustment = Extract<Adjustment, { type: 'variant' }>;

/**
 * The variant table: dynamic variants are every combination of the properties' values, static ones the values of the variant
 * adjustments. Rows run by currency, then variant order, and exist only where that currency's variant
 * adjustment prices the variant.
 */
export function variantTable(
  definition: VariantDefinition,
  adjustments: readonly { currency: string; adjustment: Adjustment | null }[],
): ProductVariantTable {
  const priced = adjustments
    .filter((a): a is { currency: string; adjustment: VariantAdjustment } => a.adjustment?.type === 'variant')
    .sort((a, b) => (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0));
  const variants: Variant[] = definition.isDynamic
    ? combinations(definition)
    : [...new Set(priced.flatMap((a) => a.adjustment.values.map((v) => v.value)))].map((variantId) => ({
        variantId,
        properties: {},
      }));
  const rows = priced.flatMap(({ currency, adjustment }) => {
    const prices = new Map(adjustment.values.map((v) => [v.value, v.unitPrice]));
    return variants.flatMap(({ variantId, properties }) => {
      const unitPrice = prices.get(variantId);
      return unitPrice === undefined ? [] : [{ currency, variantId, unitPrice, properties }];
    });
  });
  return {
    isDynamic: definition.isDynamic,
    template: definition.template,
    tokens: templateTokens(definition.template),
    properties: definition.properties,
    rows,
  };
}

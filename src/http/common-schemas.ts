import { type TSchema, Type } from 'typebox';
import { Problem } from './errors.ts';

export const ProblemRef = Type.Ref('Problem');

/** Statuses every authenticated route can answer with, whatever it does. */
const commonErrorStatuses = [400, 401, 403, 413, 415, 429, 500, 503] as const;

export function withErrorResponses(
  response: Record<string, unknown> | undefined,
  extra: number[] = [],
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...response };
  for (const status of [...commonErrorStatuses, ...extra]) out[status] ??= ProblemRef;
  return out;
}

export { Problem };

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const Properties = Type.Record(
  Type.String({ maxLength: 200 }),
  Nullable(Type.String({ maxLength: 10_000 })),
  {
    description: 'Catalogue property values keyed by property name; a value may be null',
  },
);

export const ProductId = Type.String({
  minLength: 1,
  maxLength: 128,
  description: 'The product id of the external CRM catalogue, stored as given',
});

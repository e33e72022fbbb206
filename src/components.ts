import { type Static, type TSchema, type TUnsafe, Type } from 'typebox';

/**
 * Named schemas, the OpenAPI document's components: declared once with `component` and used everywhere through the
 * `$ref` it returns (typed as the schema, for `Static` and the type provider), so generators make one named type.
 * The app registers each with Fastify and with the validators, which resolve the references (src/shared/validation.ts).
 */

const declared = new Map<string, TSchema>();

export function component<T extends TSchema>(name: string, schema: T): TUnsafe<Static<T>> {
  if (declared.has(name)) throw new Error(`The schema component ${name} is declared twice`);
  declared.set(name, { ...schema, $id: name });
  return Type.Unsafe<Static<T>>({ $ref: name });
}

/** The schema a component reference stands for, for code that reads its keywords (the limits it states). */
export function declaredSchema(reference: TSchema): TSchema {
  const schema = declared.get(String((reference as { $ref?: string }).$ref));
  if (!schema) throw new Error('Not a reference to a declared schema component');
  return schema;
}

/** Every component declared so far, each carrying its name as $id. */
export function components(): TSchema[] {
  return [...declared.values()];
}

/**
 * One of several components told apart by one property's value (an OpenAPI discriminator: generators make a tagged
 * union). Validated as a plain oneOf; each member fixes another value of the property, so at most one matches and
 * the problems reported are those an anyOf of the members would report.
 */
export function taggedUnion<T extends TUnsafe>(
  name: string,
  propertyName: string,
  members: Record<string, T>,
  options: { description: string },
): TUnsafe<Static<T>> {
  const refs = Object.values(members) as (T & { $ref: string })[];
  const mapping = Object.fromEntries(
    Object.entries(members).map(([value, member]) => [
      value,
      `#/components/schemas/${(member as T & { $ref: string }).$ref}`,
    ]),
  );
  return component(
    name,
    Type.Unsafe<Static<T>>({ ...options, oneOf: refs, discriminator: { propertyName, mapping } }),
  );
}

import { type Static, type TSchema, type TUnsafe, Type } from 'typebox';

/**
 * Named schemas, the components of the OpenAPI document. A resource, a request body or a page is declared once with
 * `component`, under the name it has in the document (components.schemas.<name>), and is used everywhere else, in
 * routes and inside other schemas, through the reference `component` returns: the document then says
 * `$ref: '#/components/schemas/<name>'`, so a code generator gives it one named type, and the schema is written
 * out once instead of at every use. The reference is typed as the schema, so `Static` and Fastify's type provider
 * see the full type. The app registers every component with Fastify (for the document) and with the validators,
 * which resolve the references (src/http/validation.ts).
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
 * A component that is one of several components, told apart by the value of one property of theirs. The document
 * maps each value to its component (an OpenAPI discriminator), so generators make a tagged union. Validation reads
 * it as a plain oneOf, and each member fixes another value of the property, so a value matches one member at most:
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

import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { components } from '../components.ts';

// ajv-formats ships CommonJS with the function on `default`.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

// No `discriminator` option: the document's discriminators carry a mapping for code generators, which that option
// refuses; each is a oneOf whose members exclude one another, checked as such (src/components.ts).
const shared: Options = {
  allErrors: true,
  removeAdditional: false,
  useDefaults: true,
  strict: false,
};

// Bodies are JSON and keep their types: "5" is not a number there. Query strings, path parameters and headers
// are text by nature, so they are coerced to the declared types.
const bodyAjv = addFormats(new Ajv({ ...shared, coerceTypes: false }));
const textAjv = addFormats(new Ajv({ ...shared, coerceTypes: 'array' }));

// Route schemas refer to the named components by $ref; both instances know every one declared so far. They are
// declared as their modules load, before any route is compiled.
let known = 0;
function learnComponents(): void {
  const all = components();
  for (const schema of all.slice(known)) {
    bodyAjv.addSchema(schema);
    textAjv.addSchema(schema);
  }
  known = all.length;
}

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  learnComponents();
  return (httpPart === 'body' ? bodyAjv : textAjv).compile(schema as object) as ReturnType<
    FastifySchemaCompiler<unknown>
  >;
};

// For large documents: a oneOf with a discriminator is checked against the one member its tag names, rather than
// against every member, which on a catalogue file of 200,000 prices made errors by the million, a second of work
// and a hundred megabytes of garbage.
let taggedAjv: Ajv | undefined;

/**
 * A validator of a JSON document as bodies are validated, reading `discriminator` (OpenAPI) as Ajv does: for a
 * route's own large body, and for the command line, which reads the same documents from files.
 */
export function jsonValidator(schema: object) {
  learnComponents();
  taggedAjv ??= addFormats(new Ajv({ ...shared, coerceTypes: false, discriminator: true }));
  return taggedAjv.compile(schema);
}

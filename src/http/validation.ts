import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

// ajv-formats ships CommonJS with the function on `default`.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const shared: Options = {
  allErrors: true,
  removeAdditional: false,
  useDefaults: true,
  strict: false,
  discriminator: true,
};

// Bodies are JSON and keep their types: "5" is not a number there. Query strings, path parameters and headers
// are text by nature, so they are coerced to the declared types.
const bodyAjv = addFormats(new Ajv({ ...shared, coerceTypes: false }));
const textAjv = addFormats(new Ajv({ ...shared, coerceTypes: 'array' }));

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? bodyAjv : textAjv).compile(schema as object) as ReturnType<
    FastifySchemaCompiler<unknown>
  >;

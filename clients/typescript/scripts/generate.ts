// Writes src/schema.d.ts, the TypeScript types of the cpq API, from the OpenAPI document the app generates
// (../../scripts/openapi.ts builds it without a server). `npm run generate -w @cpq/client` after changing the API;
// test/clients/typescript-client.test.ts fails while the committed file differs from what this writes.
import { readFileSync, writeFileSync } from 'node:fs';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';
import { openApiDocument } from '../../../scripts/openapi.ts';

export const schemaFile = new URL('../src/schema.d.ts', import.meta.url);

/**
 * The contents schema.d.ts should have for the app as it is. A field with a default stays optional
 * (defaultNonNullable off): the default is the service's to apply, so a request may leave it out.
 */
export async function generatedSchema(): Promise<string> {
  const document = (await openApiDocument()) as Parameters<typeof openapiTS>[0];
  return COMMENT_HEADER + astToString(await openapiTS(document, { silent: true, defaultNonNullable: false }));
}

/** The committed schema.d.ts. */
export function committedSchema(): string {
  return readFileSync(schemaFile, 'utf8');
}

if (import.meta.main) writeFileSync(schemaFile, await generatedSchema());

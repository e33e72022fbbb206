import { Readable } from 'node:stream';
import { Type } from 'typebox';
import { ProblemRef } from '../http/common-schemas.ts';
import { tag } from '../http/openapi.ts';
import type { Routes } from '../http/routes.ts';
import { validatorCompiler } from '../http/validation.ts';
import { ApplyQuery, CatalogueFileComponent, Plan } from './catalogue-files.schemas.ts';
import { applyCatalogue, exportCatalogue } from './catalogue-files.service.ts';

const tags = tag(
  'catalogue',
  'Catalogue as code: the account as one file by natural keys (no ids), exported, planned as a diff and applied ' +
    'in one transaction. Its JSON Schema is at /catalogue.schema.json',
);

export const catalogueFilesRoutes: Routes = async (app, { db, config }) => {
  app.get(
    '/catalogue',
    {
      schema: {
        operationId: 'exportCatalogue',
        summary: "Export the account's catalogue as a catalogue file",
        description:
          'Streamed a bundle at a time, in bundle id order, with every field written out. Each bundle is read in ' +
          'one snapshot of itself; an export taken while other writes run may show one bundle before a write and ' +
          'another after it. A bundle is keyed by its catalogue key: the key the file that made it gave, else its ' +
          'header productId, with " (2)", " (3)"... for later bundles of a header already taken (a clone).',
        tags,
        response: { 200: Type.With(CatalogueFileComponent, { description: 'The catalogue file' }) },
      },
    },
    async (request, reply) =>
      reply
        .type('application/json; charset=utf-8')
        .send(Readable.from(exportCatalogue(db, request.account.id)) as never),
  );

  app.post(
    '/catalogue/apply',
    {
      bodyLimit: config.catalogueBodyLimit,
      // The service checks the file itself, once, with the validator it shares with the command line; the body
      // schema below documents it.
      validatorCompiler: (route) => (route.httpPart === 'body' ? () => true : validatorCompiler(route)),
      config: { etag: false },
      schema: {
        operationId: 'applyCatalogue',
        summary: 'Plan a catalogue file against the account and apply it in one transaction',
        description:
          'Answers the plan: per record (bundle, option, product, rule) created, changed (with the changed fields ' +
          'before and after) or deleted. Without dryRun the plan is applied in one transaction, all or nothing, ' +
          'holding the lock of every bundle it touches as other writes do; one event per bundle created, changed ' +
          '(bundle.updated) or deleted is recorded in it. Applying the same file again changes nothing (an empty ' +
          'plan). Records the account has and the file does not are kept unless prune=true. A read-only key gets ' +
          '403, dry run included. The body may be up to CATALOGUE_BODY_LIMIT bytes (64 MiB by default). A file that ' +
          'breaks the schema answers 400, one that breaks a rule across records (a duplicate key, a rule naming an ' +
          'option the bundle lacks, a default product not in its option) 422, each listing every problem with a ' +
          'JSON pointer into the file; nothing is written. 409: another apply created a bundle of the same key at ' +
          'the same time; nothing was written.',
        tags,
        querystring: ApplyQuery,
        body: CatalogueFileComponent,
        response: {
          200: Type.With(Plan, { description: 'The plan, applied unless dryRun' }),
          409: ProblemRef,
          413: Type.With(ProblemRef, { description: 'The file is over CATALOGUE_BODY_LIMIT bytes' }),
          422: ProblemRef,
        },
      },
    },
    async (request) =>
      applyCatalogue(db, request.account.id, request.body, {
        dryRun: request.query.dryRun ?? false,
        prune: request.query.prune ?? false,
      }),
  );
};

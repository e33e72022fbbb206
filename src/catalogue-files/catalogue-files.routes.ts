import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { errorCodes, type FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ProblemRef } from '../http/common-schemas.ts';
import { tag } from '../http/openapi.ts';
import type { Routes } from '../http/routes.ts';
import { validatorCompiler } from '../http/validation.ts';
import { AppError } from '../problems.ts';
import { ApplyQuery, CatalogueFileComponent, Plan } from './catalogue-files.schemas.ts';
import {
  applyCatalogue,
  type CheckedCatalogue,
  checkedCatalogue,
  exportCatalogue,
} from './catalogue-files.service.ts';

/**
 * A catalogue file as it arrived, in a temporary file: it is read twice (checked, then planned and applied) a bundle
 * at a time, so that neither the bytes nor the parsed file are ever in memory whole, and a slow upload holds no
 * database connection. `sha256`, its only enumerable field, is what an Idempotency-Key compares.
 */
class Upload {
  readonly sha256: string;
  readonly #folder: string;
  readonly #path: string;
  #disposed = false;

  constructor(folder: string, path: string, sha256: string) {
    this.#folder = folder;
    this.#path = path;
    this.sha256 = sha256;
  }

  read(): Readable {
    return createReadStream(this.#path);
  }

  async dispose(): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    await rm(this.#folder, { recursive: true, force: true });
  }
}

/** Writes the body to a temporary file as it arrives, refusing it (413) once it is over `limit` bytes. */
async function spool(request: FastifyRequest, payload: Readable, limit: number): Promise<Upload> {
  if (Number(request.headers['content-length']) > limit) throw new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE();
  const folder = await mkdtemp(join(tmpdir(), 'cpq-upload-'));
  const path = join(folder, 'file.json');
  const hash = createHash('sha256');
  let size = 0;
  try {
    await pipeline(
      payload,
      async function* (chunks: AsyncIterable<Buffer>) {
        for await (const chunk of chunks) {
          size += chunk.length;
          if (size > limit) throw new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE();
          hash.update(chunk);
          yield chunk;
        }
      },
      createWriteStream(path),
    );
  } catch (error) {
    await rm(folder, { recursive: true, force: true });
    throw error;
  }
  return new Upload(folder, path, hash.digest('hex'));
}

const noBytes = async function* (): AsyncGenerator<Uint8Array> {};

const tags = tag(
  'catalogue',
  'Catalogue as code: the account as one file by natural keys (no ids), exported, planned as a diff and applied ' +
    'in one transaction. Its JSON Schema is at /catalogue.schema.json',
);

export const catalogueFilesRoutes: Routes = async (app, { config }) => {
  // The file each request sent, checked once (checkCatalogue), for its handler.
  const checkedFiles = new WeakMap<FastifyRequest, Promise<CheckedCatalogue>>();
  const checked = (request: FastifyRequest): Promise<CheckedCatalogue> => {
    let file = checkedFiles.get(request);
    if (file === undefined) {
      const upload = request.body as unknown as Upload | undefined;
      file = checkedCatalogue(upload ? () => upload.read() : noBytes);
      checkedFiles.set(request, file);
    }
    return file;
  };
  // Within this plugin only: a catalogue file is spooled, not parsed whole (src/http/json-body.ts); the service
  // reads it in pieces, each checked as a body is.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', (request, payload, done) => {
    spool(request, payload, config.catalogueBodyLimit).then(
      (upload) => done(null, upload),
      (error: Error) => done(error, undefined),
    );
  });
  // The handler disposes of the file; this is for a request answered before it runs (a replayed Idempotency-Key).
  app.addHook('onResponse', async (request) => {
    if (request.body instanceof Upload) await request.body.dispose();
  });

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
        // One bundle's text read ahead, not the default sixteen: those waiting on the client outlived the young
        // generation's collections and grew the heap by tens of megabytes.
        .send(Readable.from(exportCatalogue(request.scope), { highWaterMark: 1 }) as never),
  );

  app.post(
    '/catalogue/apply',
    {
      bodyLimit: config.catalogueBodyLimit,
      // The service checks the file itself, once, with the validator it shares with the command line; the body
      // schema below documents it.
      validatorCompiler: (route) => (route.httpPart === 'body' ? () => true : validatorCompiler(route)),
      // The file is checked where other routes validate their bodies, before the query, the headers and the
      // Idempotency-Key: a file that breaks the schema is a 400 whatever they hold. A problem across its records
      // (422) is a rule, which other routes find in their handler, after those: the handler throws it.
      preValidation: async (request) => {
        try {
          await checked(request);
        } catch (error) {
          if (!(error instanceof AppError && error.status === 422)) throw error;
        }
      },
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
    async (request) => {
      const upload = request.body as unknown as Upload | undefined;
      try {
        return await applyCatalogue(request.scope, {
          checked: await checked(request),
          options: { dryRun: request.query.dryRun ?? false, prune: request.query.prune ?? false },
        });
      } finally {
        await upload?.dispose();
      }
    },
  );
};

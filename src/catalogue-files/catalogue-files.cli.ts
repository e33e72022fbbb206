// `cpq catalogue export|apply|schema`: the command-line side of catalogue files, kept beside the feature so that
// src/cli.ts only lists it.
import { closeSync, createReadStream, fstatSync, openSync } from 'node:fs';
import { AppError } from '../problems.ts';
import {
  type CliSupport,
  EXIT_CONFLICT,
  EXIT_INVALID_FILE,
  type Values,
  write,
} from '../shared/cli-support.ts';
import { scopeOutsideHttp } from '../shared/scope.ts';
import type { Plan, PlanChange } from './catalogue-files.schemas.ts';

// The catalogue's service and schemas are loaded by the commands that use them, so that every other command (and
// the primary of `serve --workers`) starts without them and the catalogue's modules.
const service = () => import('./catalogue-files.service.ts');

const symbols = { create: '+', change: '~', delete: '-' } as const;

function describeKey(change: PlanChange): string {
  const { bundle, option, productId, rule, occurrence } = change.key;
  const parts = [
    bundle,
    option,
    productId,
    rule === undefined ? undefined : `rule ${rule}${occurrence ? ` #${occurrence}` : ''}`,
  ];
  return parts.filter((p) => p !== undefined).join(' / ');
}

/** The plan for a person: one line per change, then one per changed field with its value before and after. */
export function planLines(plan: Plan): string[] {
  const lines: string[] = [];
  for (const change of plan.changes) {
    lines.push(`${symbols[change.action]} ${change.kind} ${describeKey(change)}`);
    for (const [field, before] of Object.entries(change.before ?? {})) {
      lines.push(
        `    ${field}: ${JSON.stringify(before)} -> ${JSON.stringify(change.after?.[field] ?? null)}`,
      );
    }
  }
  return lines;
}

export interface Progress {
  /** Bytes of the file read while it is checked. */
  checking(bytes: number): void;
  /** Bundles planned or applied. */
  applying(done: number, total: number): void;
}

/**
 * Bars on a terminal, each redrawn in place: the file's bytes while it is checked, then its bundles while they are
 * planned and applied. None with --json, nor off a terminal: logs, pipes and scripts get only the results.
 */
export function progressOn(
  stream: { isTTY?: boolean; write(text: string): unknown },
  { fileBytes, dryRun, json }: { fileBytes: number; dryRun: boolean; json: boolean },
): Progress | undefined {
  if (json || stream.isTTY !== true) return undefined;
  let shown = '';
  const draw = (label: string, done: number, total: number, counts: string) => {
    const width = 30;
    const filled = total === 0 ? width : Math.min(width, Math.floor((done / total) * width));
    const line = `\r${label} [${'#'.repeat(filled)}${' '.repeat(width - filled)}] ${counts}`;
    if (line === shown) return;
    shown = line;
    stream.write(done >= total ? `${line}\n` : line);
  };
  const megabytes = (bytes: number) => (bytes / 1048576).toFixed(1);
  return {
    checking: (bytes) => draw('checking', bytes, fileBytes, `${megabytes(bytes)}/${megabytes(fileBytes)} MB`),
    applying: (done, total) =>
      draw(dryRun ? 'planning' : 'applying', done, total, `${done}/${total} bundles`),
  };
}

export function catalogueCommands({ withDatabase, accountOption, usageError }: CliSupport) {
  return {
    'catalogue export': {
      usage: 'cpq catalogue export --account <accountId>',
      summary: "Write the account's catalogue file (JSON) to stdout, a bundle at a time.",
      options: { account: { type: 'string' as const } },
      run: async (values: Values) => {
        const accountId = accountOption(values.account);
        const { exportCatalogue } = await service();
        await withDatabase(async (db) => {
          for await (const chunk of exportCatalogue(scopeOutsideHttp(db, accountId))) await write(chunk);
        });
      },
    },
    'catalogue apply': {
      usage: 'cpq catalogue apply --account <accountId> <file> [--dry-run] [--prune] [--json]',
      summary: 'Plan a catalogue file against the account, print the plan, and apply it in one transaction.',
      details: [
        '  --dry-run   print the plan and write nothing',
        '  --prune     delete what the account has and the file does not (bundles, options, products, rules)',
        '  --json      print the plan as JSON rather than one line per change',
        'The plan goes to stdout, a summary line to stderr. Exit codes: 0 done (or planned, with --dry-run);',
        `  2 bad arguments or unreadable file; ${EXIT_INVALID_FILE} the file has problems (each listed on stderr`,
        `  with its JSON pointer; nothing written); ${EXIT_CONFLICT} another write raced this one (nothing written).`,
      ],
      options: {
        account: { type: 'string' as const },
        'dry-run': { type: 'boolean' as const },
        prune: { type: 'boolean' as const },
        json: { type: 'boolean' as const },
      },
      positionals: 1,
      run: async (values: Values, [path]: string[]) => {
        const accountId = accountOption(values.account);
        const cannotRead = (reason: string) => usageError(`${path} cannot be read: ${reason}`);
        let fileBytes: number;
        try {
          const fd = openSync(path as string, 'r');
          fileBytes = fstatSync(fd).size;
          closeSync(fd);
        } catch (error) {
          const code = (error as { code?: string }).code;
          throw cannotRead(code === 'ENOENT' ? 'does not exist' : (error as Error).message);
        }
        // Read a bundle at a time, twice (checked, then applied): the file is never in memory whole.
        const source = () => createReadStream(path as string);
        const dryRun = values['dry-run'] === true;
        const progress = progressOn(process.stderr, { fileBytes, dryRun, json: values.json === true });
        async function* counted() {
          let read = 0;
          for await (const chunk of source()) {
            read += (chunk as Buffer).length;
            progress?.checking(read);
            yield chunk as Buffer;
          }
        }
        const { applyCatalogue, checkedCatalogue } = await service();
        let plan: Plan;
        try {
          plan = await withDatabase(async (db) =>
            applyCatalogue(scopeOutsideHttp(db, accountId), {
              checked: { ...(await checkedCatalogue(counted)), source },
              options: { dryRun, prune: values.prune === true, onProgress: progress?.applying },
            }),
          );
        } catch (error) {
          if (error instanceof AppError && error.code === 'malformed_json')
            throw cannotRead(error.errors?.[0]?.message ?? error.message);
          if ((error as { syscall?: unknown }).syscall !== undefined)
            throw cannotRead((error as Error).message);
          if (
            !(error instanceof AppError) ||
            (error.status !== 400 && error.status !== 409 && error.status !== 422)
          ) {
            throw error;
          }
          for (const item of error.errors ?? []) console.error(`${path}#${item.pointer}: ${item.message}`);
          console.error(`cpq: ${path}: ${error.message}; nothing was written`);
          return error.status === 409 ? EXIT_CONFLICT : EXIT_INVALID_FILE;
        }
        if (values.json === true) await write(`${JSON.stringify(plan, null, 2)}\n`);
        else for (const line of planLines(plan)) await write(`${line}\n`);
        const { create, change, delete: deleted } = plan.summary;
        const counts = `${create} to create, ${change} to change, ${deleted} to delete`;
        console.error(dryRun ? `dry run: ${counts}; nothing was written` : `applied: ${counts}`);
      },
    },
    'catalogue schema': {
      usage: 'cpq catalogue schema',
      summary: 'Print the JSON Schema of catalogue files (also served at /catalogue.schema.json).',
      run: async () => {
        const { catalogueJsonSchema } = await import('./catalogue-files.schemas.ts');
        await write(`${JSON.stringify(catalogueJsonSchema(), null, 2)}\n`);
      },
    },
  };
}

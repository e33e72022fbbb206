// `cpq catalogue export|apply|schema`: the command-line side of catalogue files, kept beside the feature so that
// src/cli.ts only lists it.
import { once } from 'node:events';
import { closeSync, createReadStream, openSync } from 'node:fs';
import type { Db } from '../db/database.ts';
import { AppError } from '../problems.ts';
import { scopeOutsideHttp } from '../shared/scope.ts';
import type { Plan, PlanChange } from './catalogue-files.schemas.ts';

// The catalogue's service and schemas are loaded by the commands that use them, so that every other command (and
// the primary of `serve --workers`) starts without them and the catalogue's modules.
const service = () => import('./catalogue-files.service.ts');

/** Exit codes of `cpq catalogue apply`, beyond 0 (done), 1 (a fault) and 2 (bad arguments). */
export const EXIT_INVALID_FILE = 3;
export const EXIT_CONFLICT = 4;

interface CliSupport {
  withDatabase: <T>(work: (db: Db) => Promise<T>) => Promise<T>;
  accountOption: (value: unknown) => string;
  usageError: (message: string) => Error;
}

type Values = Record<string, string | boolean | undefined>;

async function write(text: string): Promise<void> {
  if (!process.stdout.write(text)) await once(process.stdout, 'drain');
}

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

/** A bar on stderr, redrawn in place; only on a terminal, so logs and pipes get none. */
function progressBar(): ((done: number, total: number) => void) | undefined {
  if (!process.stderr.isTTY) return undefined;
  let last = -1;
  return (done, total) => {
    const width = 30;
    const filled = total === 0 ? width : Math.round((done / total) * width);
    if (filled === last && done !== total) return;
    last = filled;
    process.stderr.write(`\r[${'#'.repeat(filled)}${' '.repeat(width - filled)}] ${done}/${total} bundles`);
    if (done === total) process.stderr.write('\n');
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
        try {
          closeSync(openSync(path as string, 'r'));
        } catch (error) {
          const code = (error as { code?: string }).code;
          throw cannotRead(code === 'ENOENT' ? 'does not exist' : (error as Error).message);
        }
        // Read a bundle at a time, twice (checked, then applied): the file is never in memory whole.
        const source = () => createReadStream(path as string);
        const dryRun = values['dry-run'] === true;
        const { applyCatalogue, checkedCatalogue } = await service();
        let plan: Plan;
        try {
          plan = await withDatabase(async (db) =>
            applyCatalogue(scopeOutsideHttp(db, accountId), {
              checked: await checkedCatalogue(source),
              options: { dryRun, prune: values.prune === true, onProgress: progressBar() },
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

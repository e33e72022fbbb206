// `cpq prices export|import|bulk-change`: the command-line side of a price book's bulk changes and CSV files, kept
// beside the feature so that src/cli.ts only lists it.
import { readFile } from 'node:fs/promises';
import { AppError } from '../problems.ts';
import {
  type CliSupport,
  EXIT_CONFLICT,
  EXIT_INVALID_FILE,
  type Values,
  write,
} from '../shared/cli-support.ts';
import { type RequestScope, scopeOutsideHttp } from '../shared/scope.ts';
import { validatorCompiler } from '../shared/validation.ts';
import {
  BULK_CHANGE_FIELDS,
  BulkChangeBody,
  type BulkChangeField,
  type PriceChange,
} from './price-books.schemas.ts';

// Loaded by the commands that use it, so every other command starts without the price books' modules.
const service = () => import('./price-books.service.ts');

const money = (value: number | null) => (value === null ? 'none' : String(value));

/** A change for a person: where it is, then each price that moves, before -> after. */
export function changeLines(change: PriceChange): string[] {
  const where = `${change.action === 'create' ? '+' : '~'} ${change.productId} ${change.currency}`;
  const lines = [change.line === undefined ? where : `${where} (line ${change.line})`];
  for (const field of ['standardPrice', 'listPrice'] as const) {
    const before = change.before?.[field] ?? null;
    if (before !== change.after[field])
      lines.push(`    ${field}: ${money(before)} -> ${money(change.after[field])}`);
  }
  const adjustment = (a: unknown) => (a === null || a === undefined ? 'none' : JSON.stringify(a));
  if (adjustment(change.before?.adjustment) !== adjustment(change.after.adjustment)) {
    lines.push(
      `    adjustment: ${adjustment(change.before?.adjustment)} -> ${adjustment(change.after.adjustment)}`,
    );
  }
  if ((change.before?.allowUnitPriceEditing ?? false) !== change.after.allowUnitPriceEditing) {
    lines.push(`    allowUnitPriceEditing: ${change.after.allowUnitPriceEditing}`);
  }
  return lines;
}

/** A refused change, on stderr, each problem where it is: the exit code says which kind. */
function refused(error: unknown, source: string): number {
  if (!(error instanceof AppError) || ![400, 404, 409, 412, 422].includes(error.status)) throw error;
  for (const item of error.errors ?? []) console.error(`${source}#${item.pointer}: ${item.message}`);
  console.error(`cpq: ${error.message}; nothing was written`);
  if (error.status === 404) return 2;
  return error.status === 409 || error.status === 412 ? EXIT_CONFLICT : EXIT_INVALID_FILE;
}

const exitCodes = [
  `Exit codes: 0 done (or planned, with --dry-run); 2 bad arguments, an unreadable file or no such price book;`,
  `  ${EXIT_INVALID_FILE} refused (each problem listed on stderr, a file's by /line/<n>/<column>; nothing written);`,
  `  ${EXIT_CONFLICT} the price book is deleted (nothing written).`,
];

export function pricesCommands({ withDatabase, accountOption, usageError }: CliSupport) {
  const scoped = <T>(accountId: string, work: (scope: RequestScope) => Promise<T>) =>
    withDatabase((db) => work(scopeOutsideHttp(db, accountId)));
  const summaryLine = (dryRun: boolean, { changed, unchanged }: { changed: number; unchanged: number }) =>
    `${dryRun ? 'dry run: ' : ''}${changed} to change, ${unchanged} unchanged${dryRun ? '; nothing was written' : ''}`;
  return {
    'prices export': {
      usage: 'cpq prices export --account <accountId> <priceBookId>',
      summary:
        "Write a price book's prices to stdout as CSV (docs/price-books.md), ready to edit and import.",
      options: { account: { type: 'string' as const } },
      positionals: 1,
      run: async (values: Values, [priceBookId]: string[]) => {
        const accountId = accountOption(values.account);
        const { exportPricesCsv } = await service();
        try {
          const { value } = await scoped(accountId, (scope) => exportPricesCsv(scope, priceBookId as string));
          await write(value);
        } catch (error) {
          return refused(error, priceBookId as string);
        }
      },
    },
    'prices import': {
      usage: 'cpq prices import --account <accountId> <priceBookId> <file.csv> [--dry-run]',
      summary:
        'Import a CSV file of prices into a price book, in one transaction; prints each price that changes.',
      details: ['  --dry-run   print what would change and write nothing', ...exitCodes],
      options: { account: { type: 'string' as const }, 'dry-run': { type: 'boolean' as const } },
      positionals: 2,
      run: async (values: Values, [priceBookId, path]: string[]) => {
        const accountId = accountOption(values.account);
        let csv: string;
        try {
          csv = await readFile(path as string, 'utf8');
        } catch (error) {
          throw usageError(`${path} cannot be read: ${(error as Error).message}`);
        }
        const dryRun = values['dry-run'] === true;
        const { importPricesCsv } = await service();
        try {
          const { value } = await scoped(accountId, (scope) =>
            importPricesCsv(scope, { priceBookId: priceBookId as string, csv, dryRun, expected: null }),
          );
          for (const change of value.changes) await write(`${changeLines(change).join('\n')}\n`);
          console.error(summaryLine(dryRun, value.summary));
        } catch (error) {
          return refused(error, path as string);
        }
      },
    },
    'prices bulk-change': {
      usage:
        'cpq prices bulk-change --account <accountId> <priceBookId> --percent <p> --fields <f,...> ' +
        '[--currencies <C,...>] [--dry-run]',
      summary:
        "Change a price book's prices by a percent, rounded as the currency counts; prints each change.",
      details: [
        `  --fields      which prices change, comma-separated: ${BULK_CHANGE_FIELDS.join(', ')}`,
        '  --currencies  only these currencies (default: every currency of the book)',
        '  --dry-run     print what would change and write nothing',
        ...exitCodes,
      ],
      options: {
        account: { type: 'string' as const },
        percent: { type: 'string' as const },
        fields: { type: 'string' as const },
        currencies: { type: 'string' as const },
        'dry-run': { type: 'boolean' as const },
      },
      positionals: 1,
      run: async (values: Values, [priceBookId]: string[]) => {
        const accountId = accountOption(values.account);
        const percent = Number(values.percent);
        if (typeof values.percent !== 'string' || !/^-?\d+(\.\d+)?$/.test(values.percent)) {
          throw usageError('--percent <p> is required: a number such as 3 or -2.5');
        }
        const fields = String(values.fields ?? '')
          .split(',')
          .filter(Boolean);
        const unknown = fields.filter((f) => !(BULK_CHANGE_FIELDS as readonly string[]).includes(f));
        if (fields.length === 0 || unknown.length > 0) {
          throw usageError(`--fields takes one or more of ${BULK_CHANGE_FIELDS.join(', ')}`);
        }
        const currencies =
          typeof values.currencies === 'string' ? values.currencies.split(',').filter(Boolean) : undefined;
        const body = {
          percent,
          fields: fields as BulkChangeField[],
          currencies,
          dryRun: values['dry-run'] === true,
        };
        // The body the HTTP route would validate, checked by the same schema.
        const validate = validatorCompiler({ schema: BulkChangeBody, httpPart: 'body' });
        if (!validate(body)) {
          const [first] = validate.errors ?? [];
          throw usageError(
            `--${first?.instancePath.split('/')[1] ?? 'percent'} ${first?.message ?? 'is not valid'}`,
          );
        }
        const dryRun = body.dryRun;
        const { bulkChangePrices } = await service();
        try {
          const { value } = await scoped(accountId, (scope) =>
            bulkChangePrices(scope, { priceBookId: priceBookId as string, body, expected: null }),
          );
          for (const change of value.changes) await write(`${changeLines(change).join('\n')}\n`);
          console.error(summaryLine(dryRun, value.summary));
        } catch (error) {
          return refused(error, 'bulk-change');
        }
      },
    },
  };
}

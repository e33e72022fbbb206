import { type CsvError, parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { AppError, bodyItem, type ProblemItem, pointer } from '../problems.ts';
import { type AjvError, ajvItems, validatorCompiler } from '../shared/validation.ts';
import type { PriceRow } from './price-books.repository.ts';
import { MAX_CSV_ROWS, PRICE_CSV_COLUMNS, type PriceCsvColumn, PriceWrite } from './price-books.schemas.ts';

/** Where a problem of a CSV file is: its line (the header is line 1), then the column and any path inside it. */
export const linePointer = (line: number, ...tokens: (string | number)[]) => pointer('line', line, ...tokens);

/** A data row of a CSV file read as the write it asks for. */
export interface CsvWrite {
  line: number;
  write: PriceWrite;
}

const badCsv = (line: number, message: string) =>
  new AppError('validation_failed', `line ${line}: ${message}`, {
    errors: [bodyItem('invalid_csv', linePointer(line), message)],
  });

let validateWrite: ReturnType<typeof validatorCompiler> | undefined;

/** Each row is checked as an element of a JSON body is, so the two say the same of the same value. */
function writeSchemaProblems(write: unknown, line: number): ProblemItem[] {
  validateWrite ??= validatorCompiler({
    schema: PriceWrite,
    httpPart: 'body',
    method: 'PUT',
    url: '/v1/pricebooks/:priceBookId/prices',
  });
  if (validateWrite(write)) return [];
  const errors = (validateWrite.errors ?? []) as AjvError[];
  return ajvItems(
    errors.map((error) => ({ ...error, instancePath: linePointer(line) + error.instancePath })),
    'body',
  ).items;
}

// Plain decimal text only: a spreadsheet's "1,234.50" or "1e3" is refused rather than guessed at.
const decimalText = /^\d+(\.\d+)?$/;

/** One cell read as the value of its column, or the problem that keeps it from being one. */
function cellValue(column: PriceCsvColumn, cell: string): { value?: unknown; problem?: string } {
  switch (column) {
    case 'standardPrice':
    case 'listPrice':
      if (cell === '') return { value: null };
      return decimalText.test(cell)
        ? { value: Number(cell) }
        : {
            problem: `${JSON.stringify(cell)} is not an amount: write digits with a point for decimals, like 1234.50`,
          };
    case 'allowUnitPriceEditing': {
      const lower = cell.toLowerCase();
      if (lower === '') return {};
      return lower === 'true' || lower === 'false'
        ? { value: lower === 'true' }
        : { problem: `${JSON.stringify(cell)} is neither true nor false` };
    }
    case 'adjustment':
      if (cell === '') return { value: null };
      try {
        return { value: JSON.parse(cell) as unknown };
      } catch {
        return { problem: 'is not an adjustment written as JSON, such as {"type":"override","amount":9.5}' };
      }
    case 'name':
      return {};
    default:
      return { value: cell };
  }
}

// A cell a spreadsheet would run as a formula (OWASP's CSV injection list), after any quotes already prefixed, so
// that a text which itself begins with quotes and such a character comes back exactly too.
const formulaLike = /^'*[=+\-@\t\r]/;

/** A cell made safe to open in a spreadsheet: one quote before a formula-like start, shown as text there. */
function inertCell(cell: string): string {
  return formulaLike.test(cell) ? `'${cell}` : cell;
}

/** The cell inertCell was given, from the one it wrote; any other cell as it is. */
function cellAsWritten(cell: string): string {
  return cell.startsWith("'") && formulaLike.test(cell) ? cell.slice(1) : cell;
}

/** The first line of a record: csv-parse counts lines to its end, and a quoted cell may hold line breaks. */
function firstLine(raw: string, lastLine: number): number {
  const body = raw.endsWith('\n') ? raw.slice(0, -1) : raw;
  const leading = body.length - body.replace(/^\n+/, '').length;
  return lastLine - (body.match(/\n/g)?.length ?? 0) + leading;
}

/**
 * The writes a CSV file asks for, each with its line, and the problems of every row: a column a row lacks or has too
 * many of, a cell that is not its column's kind, a write the schema refuses. A file csv-parse cannot read (a quote
 * not closed) is refused at once (400), since what follows the fault cannot be told apart.
 */
export function readPricesCsv(text: string): { writes: CsvWrite[]; problems: ProblemItem[] } {
  let records: { record: string[]; raw: string; info: { lines: number } }[];
  try {
    // Line breaks are made one kind first, so csv-parse counts each as one line.
    records = parse(text.replaceAll('\r\n', '\n'), {
      bom: true,
      info: true,
      raw: true,
      relax_column_count: true,
      skip_empty_lines: true,
    }) as unknown as typeof records;
  } catch (error) {
    const { lines, message } = error as CsvError & { lines?: number };
    throw badCsv(lines ?? 1, message.replace(/ at line \d+.*$/, ''));
  }
  const [head, ...rows] = records;
  if (head === undefined)
    throw badCsv(1, `is empty: the first line names the columns (${PRICE_CSV_COLUMNS.join(',')})`);
  const problems: ProblemItem[] = [];
  const columns: (PriceCsvColumn | null)[] = [];
  head.record.forEach((name, i) => {
    const column = PRICE_CSV_COLUMNS.find((known) => known === name.trim()) ?? null;
    if (column === null) {
      problems.push(
        bodyItem(
          'unknown_column',
          linePointer(1, i),
          `${JSON.stringify(name)} is not a column: the columns are ${PRICE_CSV_COLUMNS.join(', ')}`,
        ),
      );
    } else if (columns.includes(column)) {
      problems.push(bodyItem('duplicate_column', linePointer(1, i), `column ${column} is named twice`));
    }
    columns.push(column);
  });
  for (const needed of ['productId', 'currency'] as const) {
    if (!columns.includes(needed))
      problems.push(bodyItem('missing_column', linePointer(1), `has no ${needed} column`));
  }
  if (rows.length > MAX_CSV_ROWS) {
    throw badCsv(1, `has ${rows.length} rows: at most ${MAX_CSV_ROWS} can be imported at once`);
  }
  if (problems.length > 0) return { writes: [], problems };

  const writes: CsvWrite[] = [];
  for (const { record, raw, info } of rows) {
    const line = firstLine(raw, info.lines);
    if (record.length !== columns.length) {
      problems.push(
        bodyItem(
          'wrong_cell_count',
          linePointer(line),
          `has ${record.length} cells where the header names ${columns.length} columns`,
        ),
      );
      continue;
    }
    const write: Record<string, unknown> = {};
    let readable = true;
    record.forEach((cell, i) => {
      const column = columns[i] as PriceCsvColumn;
      const text = cellAsWritten(column === 'adjustment' ? cell : cell.trim());
      const { value, problem } = cellValue(column, text);
      if (problem !== undefined) {
        problems.push(bodyItem('invalid_cell', linePointer(line, column), problem));
        readable = false;
      } else if (value !== undefined) {
        write[column] = value;
      }
    });
    const schemaProblems = readable ? writeSchemaProblems(write, line) : [];
    problems.push(...schemaProblems);
    if (readable && schemaProblems.length === 0) writes.push({ line, write: write as PriceWrite });
  }
  return { writes, problems };
}

/**
 * A price book's rows as a CSV file, with the product names the entries carry; a cell a spreadsheet would take for
 * a formula starts with a quote, which readPricesCsv takes off.
 */
export function writePricesCsv(
  rows: readonly PriceRow[],
  entries: ReadonlyMap<string, { allowUnitPriceEditing: boolean; name: string | null }>,
): string {
  // Stored adjustments are already the JSON an import reads back: the flag lives on the entry.
  const records = rows.map((row) => {
    const entry = entries.get(row.product_id);
    return [
      row.product_id,
      entry?.name ?? '',
      row.currency,
      row.standard_price ?? '',
      row.list_price ?? '',
      String(entry?.allowUnitPriceEditing ?? false),
      row.adjustment ?? '',
    ].map(inertCell);
  });
  // csv-stringify quotes a cell holding the whole record delimiter only: a lone CR or LF would end a record early.
  return stringify([[...PRICE_CSV_COLUMNS], ...records], {
    record_delimiter: '\r\n',
    quoted_match: /[\r\n]/,
  });
}

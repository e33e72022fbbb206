import { type Compilable, CompiledQuery, PostgresAdapter } from 'kysely';
import type { Executor } from './database.ts';
import { named } from './named-statements.ts';

/** Where a parameter of a made text comes from: the value of the slot so named, or a constant of the text. */
type Source<Values> = { slot: keyof Values } | { constant: unknown };

interface Made<Values> {
  text: string;
  /** The same text marked to run as a named prepared statement (PostgreSQL), made when first asked for. */
  namedText?: string;
  sources: Source<Values>[];
}

/** A stand-in for a slot's value while the text is made: a parameter of the text that says which slot it is. */
class Slot {
  readonly name: string;
  constructor(name: string) {
    this.name = name;
  }
}

/**
 * A query-builder statement whose text is made once per shape and dialect, then run with each request's values:
 * `build` gets stand-ins for the values, and `shapeOf` says what of them changes the text. On PostgreSQL a run may
 * ask for its named prepared statement (named-statements.ts), planned once per connection. Why: bench/HISTORY.md.
 */
export function shapedStatement<Values extends Record<string, unknown>, Shape, Row>(
  shapeOf: (values: Values) => Shape,
  build: (db: Executor, slots: Values, shape: Shape) => Compilable<Row>,
): (db: Executor, values: Values, options?: { prepared?: boolean }) => CompiledQuery<Row> {
  const made = new Map<string, Made<Values>>();
  return (db, values, options = {}) => {
    const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
    const shape = shapeOf(values);
    const key = `${postgres}\n${JSON.stringify(shape)}`;
    let statement = made.get(key);
    if (statement === undefined) {
      const slots = Object.fromEntries(Object.keys(values).map((name) => [name, new Slot(name)])) as Values;
      const compiled = build(db, slots, shape).compile();
      statement = {
        text: compiled.sql,
        sources: compiled.parameters.map((p) =>
          p instanceof Slot ? { slot: p.name as keyof Values } : { constant: p },
        ),
      };
      made.set(key, statement);
    }
    let text = statement.text;
    if (postgres && options.prepared === true) {
      // A text of its own: pg is given texts only, and the same text also runs unnamed, planned for its values.
      statement.namedText ??= named(`/* prepared */ ${statement.text}`);
      text = statement.namedText;
    }
    const parameters = statement.sources.map((source) =>
      'slot' in source ? values[source.slot] : source.constant,
    );
    return CompiledQuery.raw(text, parameters) as CompiledQuery<Row>;
  };
}

import { type Kysely, type Migration, type MigrationResultSet, Migrator } from 'kysely';
import * as accountsAndKeys from './migrations/0001_accounts_and_keys.ts';
import * as catalogue from './migrations/0002_catalogue.ts';
import * as idempotencyKeys from './migrations/0003_idempotency_keys.ts';
import * as treeVersions from './migrations/0004_tree_versions.ts';
import * as events from './migrations/0005_events.ts';
import * as timestampsAndListIndexes from './migrations/0006_timestamps_and_list_indexes.ts';
import * as rules from './migrations/0007_rules.ts';
import * as webhooks from './migrations/0008_webhooks.ts';
import * as catalogueKeys from './migrations/0009_catalogue_keys.ts';
import * as searchText from './migrations/0010_search_text.ts';
import * as sqliteSearchIndex from './migrations/0011_sqlite_search_index.ts';
import * as optionCounts from './migrations/0012_option_counts.ts';
import * as quotes from './migrations/0013_quotes.ts';
import * as approvals from './migrations/0014_approvals.ts';
import * as eventKeys from './migrations/0015_event_keys.ts';
import * as quoteExpiryEvents from './migrations/0016_quote_expiry_events.ts';
import * as quoteLineUnitPriceFlag from './migrations/0017_quote_line_unit_price_flag.ts';

// Listed in code, not read from a folder: the set is the same wherever the process starts from.
export const migrations: Record<string, Migration> = {
  '0001_accounts_and_keys': accountsAndKeys,
  '0002_catalogue': catalogue,
  '0003_idempotency_keys': idempotencyKeys,
  '0004_tree_versions': treeVersions,
  '0005_events': events,
  '0006_timestamps_and_list_indexes': timestampsAndListIndexes,
  '0007_rules': rules,
  '0008_webhooks': webhooks,
  '0009_catalogue_keys': catalogueKeys,
  '0010_search_text': searchText,
  '0011_sqlite_search_index': sqliteSearchIndex,
  '0012_option_counts': optionCounts,
  '0013_quotes': quotes,
  '0014_approvals': approvals,
  '0015_event_keys': eventKeys,
  '0016_quote_expiry_events': quoteExpiryEvents,
  '0017_quote_line_unit_price_flag': quoteLineUnitPriceFlag,
};

/** Brings the schema up to date. The CLI, start-up and the tests all come through here. */
export async function migrateToLatest(
  // biome-ignore lint/suspicious/noExplicitAny: the migrator works on any schema, ours included
  db: Kysely<any>,
  onApplied: (name: string) => void = () => {},
): Promise<string[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results }: MigrationResultSet = await migrator.migrateToLatest();
  const applied: string[] = [];
  for (const result of results ?? []) {
    if (result.status === 'Success') {
      applied.push(result.migrationName);
      onApplied(result.migrationName);
    }
  }
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return applied;
}

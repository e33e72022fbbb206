import type { Generated, Kysely, Transaction } from 'kysely';

// Booleans are declared BOOLEAN in both dialects; PostgreSQL returns true/false and SQLite 0/1, so mappers read
// them with Boolean(). Money is stored as decimal text (exact, both dialects); JSON documents as text; instants
// as RFC 3339 UTC text with milliseconds, which sorts correctly as text.
type Bool = boolean | number;

export interface ApiKeysTable {
  account_id: string;
  id: string;
  name: string | null;
  key_hash: string;
  read_only: Bool;
  /** May approve and reject quotes (migration 0014). */
  approver: Generated<Bool>;
  created_at: string;
  revoked_at: string | null;
}

export interface BundlesTable {
  account_id: string;
  id: string;
  is_active: Bool;
  header_product_id: string;
  header_properties: string;
  cloned_bundle_temp_name: string | null;
  /** The version of the list form: the bundle's own fields and its option counts. */
  version: number;
  /** Moves with any change to the bundle or to what its details are made of; kept by triggers (migration 0004). */
  tree_version: Generated<number>;
  /** The bundle's key in catalogue files when it is not its header productId; unique in the account (0009). */
  catalogue_key: Generated<string | null>;
  /** Its options by type, which its list form shows; kept by triggers (migration 0012). */
  included_options_count: Generated<number>;
  add_on_options_count: Generated<number>;
  created_at: string;
  updated_at: string;
}

export interface BundleOptionsTable {
  account_id: string;
  id: string;
  bundle_id: string;
  type: 'INCLUDED' | 'ADD_ON';
  name: string;
  description: string | null;
  display_order: number;
  min_count: number | null;
  max_count: number | null;
  default_option_product_id: string | null;
  price_book_id: string | null;
  version: number;
  created_at: string;
  updated_at: string;
}

export interface OptionProductsTable {
  account_id: string;
  id: string;
  bundle_id: string;
  option_id: string;
  product_id: string;
  properties: string;
  /** What a price book search matches (src/db/search-text.ts); the repository writes it with the properties. */
  search_text: Generated<string>;
  display_order: number;
  min_quantity: number | null;
  max_quantity: number | null;
  readonly_quantity: Bool | null;
  version: number;
  created_at: string;
  updated_at: string;
}

export interface PriceBooksTable {
  account_id: string;
  id: string;
  bundle_option_id: string;
  name: string;
  description: string | null;
  is_deleted: Bool;
  effective_start_date: string | null;
  effective_end_date: string | null;
  version: number;
  created_at: string;
  updated_at: string;
}

/** One product in one price book: the flag that spans its currencies. */
export interface PriceBookProductsTable {
  account_id: string;
  price_book_id: string;
  option_id: string;
  product_id: string;
  allow_unit_price_editing: Bool;
}

/** The per-currency part of a price book entry. */
export interface PriceBookPricesTable {
  account_id: string;
  price_book_id: string;
  product_id: string;
  currency: string;
  standard_price: string | null;
  list_price: string | null;
  adjustment: string | null;
}

export interface ProductVariantsTable {
  account_id: string;
  price_book_id: string;
  product_id: string;
  is_dynamic: Bool;
  template: string;
  properties: string;
}

/** A configuration rule of a bundle; `when_json` and `then_json` are the API's selectors as JSON text. */
export interface BundleRulesTable {
  account_id: string;
  id: string;
  bundle_id: string;
  name: string;
  kind: 'requires' | 'excludes';
  when_json: string;
  then_json: string;
  message: string | null;
  is_active: Bool;
  display_order: number;
  version: number;
  created_at: string;
  updated_at: string;
}

/** An Idempotency-Key of an account: claimed while its request runs (status null), then the response to replay. */
export interface IdempotencyKeysTable {
  account_id: string;
  key: string;
  request_hash: string;
  claim_token: string;
  status: number | null;
  /** JSON object of the replayed response headers. */
  response_headers: string | null;
  response_body: string | null;
  created_at: string;
  expires_at: string;
  locked_until: string | null;
}

/** An event of the outbox and the feed; `data` is the JSON text of `{ object }`. */
export interface EventsTable {
  account_id: string;
  id: string;
  type: string;
  created_at: string;
  request_id: string | null;
  data: string;
  /** The key whose write made it, and that key's name then (migration 0015); null outside HTTP. */
  key_id: string | null;
  key_name: string | null;
}

/** A webhook endpoint of an account; `event_types` is JSON text, the secrets are sealed (webhooks/secrets.ts). */
export interface WebhookEndpointsTable {
  account_id: string;
  id: string;
  url: string;
  event_types: string;
  description: string | null;
  is_enabled: Bool;
  disabled_reason: 'manual' | 'failing' | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: string | null;
  failing_since: string | null;
  last_event_id: string;
  version: number;
  created_at: string;
  updated_at: string;
}

/** One event to one endpoint: its state, its latest attempts (JSON text), and a worker's lease while it is sent. */
export interface WebhookDeliveriesTable {
  account_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: string;
  attempt_count: number;
  next_attempt_at: string | null;
  give_up_at: string;
  leased_until: string | null;
  lease_token: string | null;
  created_at: string;
  updated_at: string;
}

/** The last quote number handed out in an account. */
export interface QuoteNumbersTable {
  account_id: string;
  last_number: number | string;
}

export type QuoteStatus =
  | 'draft'
  | 'pending_approval'
  | 'approved'
  | 'open'
  | 'accepted'
  | 'declined'
  | 'canceled'
  | 'superseded';

/**
 * A saved quote: what was asked (`request_json`) and what it came to (`lines_json`, the lines as the API shows
 * them); `version` counts revisions of `number`, `row_version` every write (the ETag). Money as decimal text.
 */
export interface QuotesTable {
  account_id: string;
  id: string;
  number: string;
  version: number;
  status: QuoteStatus;
  currency: string;
  at: string | null;
  priced_at: string;
  title: string | null;
  notes: string | null;
  customer_id: string | null;
  customer_name: string | null;
  customer_email: string | null;
  expires_at: string | null;
  request_json: string;
  lines_json: string;
  violations_json: string;
  approvals_json: string;
  list_total: string;
  discount_total: string;
  total: string;
  search_text: string;
  submitted_key_id: string | null;
  submitted_at: string | null;
  finalized_at: string | null;
  accepted_at: string | null;
  declined_at: string | null;
  canceled_at: string | null;
  /** When the sweep recorded quote.expired for this open quote (null: not yet, or never expired while open). */
  expiry_recorded_at: string | null;
  row_version: number;
  created_at: string;
  updated_at: string;
}

/** An approval policy of an account; `when_json` is the API's `when` as JSON text. */
export interface ApprovalPoliciesTable {
  account_id: string;
  id: string;
  name: string;
  is_active: Bool;
  when_json: string;
  version: number;
  created_at: string;
  updated_at: string;
}

/** One priced line of a quote, as its lines_json shows it. */
export interface QuoteLinesTable {
  account_id: string;
  quote_id: string;
  position: number;
  bundle_id: string;
  option_id: string;
  product_id: string;
  product_name: string | null;
  quantity: number | string;
  unit_price: string;
  discount_percent: string | null;
  list_total: string;
  total: string;
}

export interface Database {
  api_keys: ApiKeysTable;
  bundles: BundlesTable;
  bundle_options: BundleOptionsTable;
  option_products: OptionProductsTable;
  price_books: PriceBooksTable;
  price_book_products: PriceBookProductsTable;
  price_book_prices: PriceBookPricesTable;
  product_variants: ProductVariantsTable;
  bundle_rules: BundleRulesTable;
  idempotency_keys: IdempotencyKeysTable;
  events: EventsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  quote_numbers: QuoteNumbersTable;
  quotes: QuotesTable;
  quote_lines: QuoteLinesTable;
  approval_policies: ApprovalPoliciesTable;
}

/** The tables whose rows belong to one bundle's tree: a change to any of them moves the bundle's tree_version. */
export const bundleTreeTables = [
  'bundle_options',
  'option_products',
  'price_books',
  'price_book_products',
  'price_book_prices',
  'product_variants',
  'bundle_rules',
] as const satisfies readonly (keyof Database)[];

/** The catalogue: bundles and their trees. */
export const catalogueTables = ['bundles', ...bundleTreeTables] as const;

/** Every table, checked against Database by the compiler: /readyz and start-up look for each of them. */
export const tableNames = Object.keys({
  api_keys: true,
  bundles: true,
  bundle_options: true,
  option_products: true,
  price_books: true,
  price_book_products: true,
  price_book_prices: true,
  product_variants: true,
  bundle_rules: true,
  idempotency_keys: true,
  events: true,
  webhook_endpoints: true,
  webhook_deliveries: true,
  quote_numbers: true,
  quotes: true,
  quote_lines: true,
  approval_policies: true,
} satisfies Record<keyof Database, true>) as (keyof Database)[];

export type Db = Kysely<Database>;
/** A connection or an open transaction: repositories take either, services decide which. */
export type Executor = Kysely<Database> | Transaction<Database>;
export type Dialect = 'sqlite' | 'postgres';

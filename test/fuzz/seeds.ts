/**
 * The seeds `npm test` fuzzes with, so that it never passes or fails by luck; `npm run fuzz` draws new ones and
 * prints the seed of any failure. A seed that ever found a bug stays here, with what it found, beside a plain
 * test of the case in regressions.test.ts: a seed replays its chains only while the OpenAPI document it draws from
 * is unchanged, so the plain test is what keeps the bug fixed.
 */
export const committedSeeds: readonly { seed: number; runs: number; found?: string }[] = [
  // 100 runs: its chains change with every operation added to the document, and with the webhook operations its
  // first 60 no longer deleted anything (no 204), which the test requires of every seed.
  { seed: 20_260_101, runs: 100 },
  {
    seed: 48_932_065,
    runs: 60,
    found:
      'GET /v1/bundles-details with a 201-character name in `properties` answered 200 off its own schema',
  },
  {
    seed: 414_346_715,
    runs: 500,
    found:
      'POST /v1/catalogue/apply with an Idempotency-Key used before and a file breaking the schema answered 409, ' +
      'not 400: the file was checked after the key',
  },
  {
    seed: 414_542_226,
    runs: 500,
    found:
      'POST /v1/catalogue/apply with a bad query or header and a file breaking a rule answered 422, not 400, once ' +
      'the file was checked before validation (the fix for 414346715 went too far)',
  },
  {
    seed: 432_803_938,
    runs: 600,
    found:
      'GET /v1/pricebooks/{id}/pricedProducts?offset=1e+300 answered 500: an integer to JSON Schema, past what ' +
      "the databases' OFFSET takes (and beside it, display orders past a PostgreSQL integer in a catalogue file)",
  },
];

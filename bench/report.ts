// Targets, and the two forms of the results: JSON for machines and diffs, Markdown for people.

import { bystanderWriteLimitMs, type CatalogueFileResult, catalogueRssLimitBytes } from './catalogue-file.ts';
import { type ConfigureHardResult, configureHardSection } from './configure-hard.ts';
import type { HostileResult } from './hostile.ts';
import type { Measurement } from './load.ts';
import type { WebhooksResult } from './webhooks.ts';

export interface ScenarioResult extends Measurement {
  name: string;
  title: string;
  peakRssBytes: number;
  /** RSS before the warm-up: the peak minus this is what the scenario added to a process that had run the others. */
  rssBeforeBytes: number;
  ratioToCeiling: number | null;
  /** CPU time (user and system) of the measured process per answer while measured, in ms: what an answer costs
   * the service whatever bounds the rate (the load generator too is on this machine). */
  cpuMsPerRequest?: number;
  /** The same for the load generator (autocannon, in the bench's process): it shares the machine's cores. */
  loadCpuMsPerRequest?: number;
}

/** One worker against two (`cpq serve --workers 2`), each scenario measured on both, back to back. */
export interface WorkersResult {
  count: number;
  /** Summed over the primary and its workers, each process's own resident pages (shared ones counted in each). */
  startRssBytes: number;
  /** The same as proportional set size: each shared page counted once, divided among the processes mapping it. */
  startPssBytes: number;
  pairs: { one: ScenarioResult; two: ScenarioResult }[];
}

export interface GrowthPoint {
  size: number;
  p50Ms: number;
  p99Ms: number;
  failures: number;
}

export interface Target {
  name: string;
  value: string;
  limit: string;
  pass: boolean;
}

export interface DatabaseResult {
  dialect: string;
  catalogue: { bundles: number; rows: number; seconds: number };
  scenarios: ScenarioResult[];
  peakRssBytes: number;
  /** Resident set size of the service once it answered /readyz, before any load. */
  startRssBytes: number;
  /** Times the service was replaced because a backlog left by a scenario had not cleared within a minute. */
  serviceRestarts: number;
  /**
   * The alternating rounds, round by round: details vs the ceiling and the quote vs details in requests per second
   * (the targets) and in CPU an answer (details over the ceiling: what the stack costs, whatever the machine's
   * speed that round), and the service's RSS as each details round began.
   */
  ceilingRounds: {
    rounds: number;
    seconds: number;
    ratios: number[];
    cpuRatios: number[];
    serviceRssBeforeBytes: number[];
    quoteRatios?: number[];
    quoteCpuRatios?: number[];
  } | null;
  /** First and deep page measured at the same time; their ratio is the pagination target. */
  pagination: { firstPage: Measurement; deepPage: Measurement; failures: number } | null;
  /** Bundle details by number of option products, one request at a time, as clients ask (cached answers). */
  detailsBySize: GrowthPoint[];
  /** The same with `at` given, which the cache never answers: every answer built from the database. */
  detailsBuiltBySize: GrowthPoint[];
  /** p50 of the first page of GET /v1/bundles by number of bundles, one request at a time. */
  listBySize: GrowthPoint[];
  /** Configure with nothing chosen, one request at a time: by rules (300 products), by products (60 rules). */
  configureByRules: GrowthPoint[];
  configureByProducts: GrowthPoint[];
  /** Priced-product search by entries in the book, one request at a time: `q` naming one product, and `q` held
   * by a third of the book (every match counted for `total`). */
  searchBySize: GrowthPoint[];
  searchBroadBySize: GrowthPoint[];
  /** The same two, each search built from the database (a second service, on the same database, caches off). */
  searchBuiltBySize: GrowthPoint[];
  searchBroadBuiltBySize: GrowthPoint[];
  extraLoad: { bundles: number; rows: number; seconds: number } | null;
  /** What events cost a price upsert, with and without a subscribed endpoint, and the delivery throughput. */
  webhooks: WebhooksResult | null;
  /** Normal load alone, then beside hostile requests (bench/hostile.ts). */
  hostile: HostileResult | null;
  /** Hard configure requests beside reads (bench/configure-hard.ts). */
  configureHard?: ConfigureHardResult | null;
  /** A catalogue file applied, exported and applied again (bench/catalogue-file.ts). */
  catalogueFile: CatalogueFileResult | null;
  workers: WorkersResult | null;
  targets: Target[];
}

export interface Results {
  status: 'ok' | 'failed';
  command: string;
  startedAt: string;
  seconds: number;
  machine: { nproc: number; cpu: string; memoryGiB: number; node: string; kernel: string };
  commit: string;
  settings: Record<string, number>;
  databases: DatabaseResult[];
}

export const p99LimitMs = 50;
export const rssLimitBytes = 200e6;
const startRssLimitBytes = 100e6;
/** Warm details of the large bundle as a share of the bare node:http ceiling; PostgreSQL pays a round trip more. */
const ceilingShareLimit: Record<string, number> = { sqlite: 0.8, postgres: 0.7 };
const deepPageFactorLimit = 1.5;
/** A quote of 30 lines on the large bundle against its warm details, in answers per second. */
const quoteShareLimit = 0.5;
/** A finalized quote read against the warm details of a bundle of about as many products: as fast. */
const quoteRead = { read: 'quote-read-finalized', details: 'details-same-size', limit: 1 };
/** The PDF of a 30-line quote is held to its p50, measured at a few connections, not to the p99 at 50. */
const quotePdf = { name: 'quote-pdf-30-lines', p50LimitMs: 100 };

const fixed = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
const mb = (bytes: number) => fixed(bytes / 1e6, 0);
const verdict = (pass: boolean) => (pass ? 'PASS' : 'MISS');

/** What hostile requests may cost the others: /healthz stays fast and the process stays small. */
export function hostileTargets(hostile: HostileResult): Target[] {
  return [
    {
      name: 'hostile: /healthz p99 beside the attacks',
      value: `${fixed(hostile.beside.healthz.p99Ms, 1)} ms (alone ${fixed(hostile.alone.healthz.p99Ms, 1)} ms)`,
      limit: `< ${p99LimitMs} ms`,
      pass: hostile.beside.healthz.p99Ms < p99LimitMs,
    },
    {
      name: 'hostile: peak RSS of the service during the attacks',
      value: `${mb(hostile.peakRssBytes)} MB (+${mb(hostile.peakRssBytes - hostile.rssBeforeBytes)})`,
      limit: `< ${mb(rssLimitBytes)} MB`,
      pass: hostile.peakRssBytes < rssLimitBytes,
    },
    {
      name: 'hostile: answers outside 200 within budget, bounded 4xx or gate 503',
      value: String(hostile.failures),
      limit: '0',
      pass: hostile.failures === 0,
    },
  ];
}

export function catalogueFileTargets(result: CatalogueFileResult): Target[] {
  const steps: [string, CatalogueFileResult['export']][] = [
    ['apply into an empty account', result.applyEmpty],
    ['export', result.export],
    ['apply of an unchanged file', result.applyUnchanged],
  ];
  const { bystander } = result;
  const failed = Object.values(bystander.failed).reduce((sum, n) => sum + n, 0);
  return [
    ...steps.map(([what, step]) => ({
      name: `catalogue-file: peak RSS growth, ${what}`,
      value: `+${mb(step.rssGrowthBytes)} MB (${fixed(step.seconds)} s)`,
      limit: `< ${mb(catalogueRssLimitBytes)} MB`,
      pass: step.rssGrowthBytes < catalogueRssLimitBytes,
    })),
    {
      name: "catalogue-file: another account's slowest write beside the apply",
      value: `${fixed(bystander.slowestWriteMs)} ms (${bystander.writes} writes)`,
      limit: `< ${bystanderWriteLimitMs} ms`,
      pass: bystander.slowestWriteMs < bystanderWriteLimitMs,
    },
    {
      name: "catalogue-file: another account's failed answers beside the apply",
      value: `${failed} (slowest uncached read ${fixed(bystander.slowestReadMs)} ms)`,
      limit: '0',
      pass: failed === 0,
    },
  ];
}

function catalogueFileSection(result: CatalogueFileResult | null): string[] {
  if (!result) return [];
  const row = (label: string, step: CatalogueFileResult['export']) => [
    label,
    fixed(step.seconds),
    mb(step.rssGrowthBytes),
  ];
  return [
    '',
    `**Catalogue file: ${result.bundles.toLocaleString('en-US')} bundles, ${result.priceRows.toLocaleString('en-US')} ` +
      `price rows (${mb(result.fileBytes)} MB as sent, ${mb(result.exportBytes)} MB exported)**`,
    '',
    ...table(
      [{ header: 'Step' }, { header: 'seconds', right: true }, { header: 'peak RSS growth MB', right: true }],
      [
        row('Apply into an empty account', result.applyEmpty),
        row('Export (streamed)', result.export),
        row('Apply the export again (empty plan)', result.applyUnchanged),
      ],
    ),
    '',
  ];
}

export function evaluateTargets(
  dialect: string,
  scenarios: ScenarioResult[],
  pagination: DatabaseResult['pagination'],
  rss: { startBytes: number; peakBytes: number },
  names: { ceiling: string; details: string; quote: string },
): Target[] {
  const targets: Target[] = [];
  const details = scenarios.find((s) => s.name === names.details);
  const share = ceilingShareLimit[dialect] ?? 1;
  if (details?.ratioToCeiling != null) {
    targets.push({
      name: 'bundle details, 1 large bundle, throughput vs bare node:http ceiling',
      value: `${fixed(details.ratioToCeiling * 100, 0)}%`,
      limit: `>= ${share * 100}%`,
      pass: details.ratioToCeiling >= share,
    });
  }
  const quote = scenarios.find((s) => s.name === names.quote);
  if (details && quote) {
    const share = quote.requestsPerSecond / details.requestsPerSecond;
    targets.push({
      name: 'quote of 30 lines on the large bundle, throughput vs its warm details',
      value: `${fixed(share, 2)}x (${fixed(quote.requestsPerSecond, 0)} vs ${fixed(details.requestsPerSecond, 0)} req/s)`,
      limit: `>= ${quoteShareLimit}x`,
      pass: share >= quoteShareLimit,
    });
  }
  const read = scenarios.find((s) => s.name === quoteRead.read);
  const sameSize = scenarios.find((s) => s.name === quoteRead.details);
  if (read && sameSize) {
    const share = read.requestsPerSecond / sameSize.requestsPerSecond;
    targets.push({
      name: 'finalized quote of 30 lines read, throughput vs warm details of a same-size bundle',
      value: `${fixed(share, 2)}x (${fixed(read.requestsPerSecond, 0)} vs ${fixed(sameSize.requestsPerSecond, 0)} req/s)`,
      limit: `>= ${quoteRead.limit}x`,
      pass: share >= quoteRead.limit,
    });
  }
  const pdf = scenarios.find((s) => s.name === quotePdf.name);
  if (pdf) {
    targets.push({
      name: `p50: ${pdf.name}`,
      value: `${fixed(pdf.p50Ms, 2)} ms`,
      limit: `< ${quotePdf.p50LimitMs} ms`,
      pass: pdf.p50Ms < quotePdf.p50LimitMs,
    });
  }
  if (pagination) {
    const { firstPage, deepPage } = pagination;
    for (const [label, key] of [
      ['p50', 'p50Ms'],
      ['p99', 'p99Ms'],
    ] as const) {
      const factor = deepPage[key] / firstPage[key];
      targets.push({
        name: `deep page ${label} vs first page ${label}, side by side`,
        value: `${fixed(factor, 2)}x (${fixed(deepPage[key], 2)} vs ${fixed(firstPage[key], 2)} ms)`,
        limit: `<= ${deepPageFactorLimit}x`,
        pass: factor <= deepPageFactorLimit,
      });
    }
  }
  // The targets are the service's: the ceiling's own p99 is in the table, for reference.
  for (const s of scenarios.filter((s) => s.name !== names.ceiling && s.name !== quotePdf.name)) {
    targets.push({
      name: `p99 at 50 connections: ${s.name}`,
      value: `${fixed(s.p99Ms, 2)} ms`,
      limit: `< ${p99LimitMs} ms`,
      pass: s.p99Ms < p99LimitMs,
    });
  }
  targets.push(
    {
      name: 'RSS of the service right after start',
      value: `${mb(rss.startBytes)} MB`,
      limit: `< ${mb(startRssLimitBytes)} MB`,
      pass: rss.startBytes < startRssLimitBytes,
    },
    {
      name: 'peak RSS of the service',
      value: `${mb(rss.peakBytes)} MB`,
      limit: `< ${mb(rssLimitBytes)} MB`,
      pass: rss.peakBytes < rssLimitBytes,
    },
  );
  return targets;
}

export type Column = { header: string; right?: boolean };

/** A Markdown table laid out as Biome formats one, so a fresh result passes `npm run check` unchanged. */
export function table(columns: Column[], rows: string[][]): string[] {
  const widths = columns.map((c, i) =>
    Math.max(c.header.length, ...rows.map((row) => (row[i] ?? '').length)),
  );
  const line = (cells: string[]) =>
    `| ${cells
      .map((cell, i) => (columns[i]?.right ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join(' | ')} |`;
  const rule = columns.map((c, i) =>
    c.right ? `${'-'.repeat((widths[i] ?? 1) - 1)}:` : '-'.repeat(widths[i] ?? 0),
  );
  return [line(columns.map((c) => c.header)), line(rule), ...rows.map(line)];
}

function growthTable(title: string, unit: string, points: GrowthPoint[]): string[] {
  const [smallest] = points;
  if (!smallest) return [];
  const columns = [
    unit,
    'p50 ms',
    'p99 ms',
    'p50 vs smallest',
    `ms per extra ${unit.toLowerCase().replace(/ies$/, 'y').replace(/s$/, '')} since previous`,
  ];
  const rows = points.map((point, i) => {
    const previous = points[i - 1];
    const slope = previous ? (point.p50Ms - previous.p50Ms) / (point.size - previous.size) : Number.NaN;
    return [
      point.size.toLocaleString('en-US'),
      fixed(point.p50Ms, 2),
      fixed(point.p99Ms, 2),
      `${fixed(point.p50Ms / smallest.p50Ms, 2)}x`,
      previous ? fixed(slope, 4) : '',
    ];
  });
  return [
    `**${title}**`,
    '',
    ...table(
      columns.map((header) => ({ header, right: true })),
      rows,
    ),
    '',
  ];
}

export function growthSummary(points: GrowthPoint[], unit: string): string {
  const first = points[0];
  const last = points[points.length - 1];
  if (!first || !last || first === last) return '';
  const sizeFactor = last.size / first.size;
  return (
    `${unit} x${sizeFactor.toLocaleString('en-US')} (${first.size.toLocaleString('en-US')} -> ` +
    `${last.size.toLocaleString('en-US')}): p50 x${fixed(last.p50Ms / first.p50Ms, 2)} ` +
    `(${fixed(first.p50Ms, 2)} -> ${fixed(last.p50Ms, 2)} ms)`
  );
}

function webhooksSection(webhooks: WebhooksResult | null): string[] {
  if (!webhooks) return [];
  const row = (label: string, m: Measurement) => [
    label,
    fixed(m.requestsPerSecond, 0),
    fixed(m.p50Ms, 2),
    fixed(m.p99Ms, 2),
    String(m.failures),
  ];
  const [before, after] = webhooks.without;
  const { delivery } = webhooks;
  return [
    '',
    `**Webhooks: price upsert of ${webhooks.entries} entries, ${webhooks.connections} connections**`,
    '',
    ...table(
      [
        { header: 'Run' },
        ...['req/s', 'p50 ms', 'p99 ms', 'errors/non-2xx'].map((header) => ({ header, right: true })),
      ],
      [
        ...(before ? [row('No endpoint', before)] : []),
        row('An endpoint subscribed, delivering beside the writes', webhooks.withEndpoint),
        ...(after ? [row('No endpoint, again', after)] : []),
      ],
    ),
    '',
    `- During the run with an endpoint: ${webhooks.eventsDuringLoad.toLocaleString('en-US')} events recorded, ` +
      `${webhooks.deliveredDuringLoad.toLocaleString('en-US')} delivered while it ran.`,
    `- Delivery to one local receiver: ${delivery.events.toLocaleString('en-US')} events in ` +
      `${fixed(delivery.seconds)} s, ${fixed(delivery.perSecond, 0)} per second.`,
    '',
  ];
}

function workersSection(workers: WorkersResult | null): string[] {
  if (!workers) return [];
  const number = (header: string) => ({ header, right: true });
  const side = (s: ScenarioResult) => [
    fixed(s.requestsPerSecond, 0),
    fixed(s.p99Ms, 2),
    s.cpuMsPerRequest === undefined ? '' : fixed(s.cpuMsPerRequest, 3),
  ];
  return [
    '',
    `**One worker against ${workers.count}** (\`cpq serve --workers ${workers.count}\`, a second service on the same ` +
      'database; each scenario driven on the one, then on the other, back to back; CPU and RSS summed over the ' +
      'primary and its workers)',
    '',
    ...table(
      [
        { header: 'Scenario' },
        number('1 worker req/s'),
        number('p99 ms'),
        number('CPU ms/req'),
        number(`${workers.count} workers req/s`),
        number('p99 ms'),
        number('CPU ms/req'),
        number(`req/s ${workers.count} vs 1`),
        { header: `p99 < 50 ms, ${workers.count} workers` },
      ],
      workers.pairs.map(({ one, two }) => [
        one.name,
        ...side(one),
        ...side(two),
        `${fixed(two.requestsPerSecond / one.requestsPerSecond, 2)}x`,
        verdict(two.p99Ms < p99LimitMs),
      ]),
    ),
    '',
    `- Memory right after start with ${workers.count} workers: RSS ${mb(workers.startRssBytes)} MB, the primary's ` +
      "and each worker's resident pages added up (Node's binary, which they share, counted in each); PSS " +
      `${mb(workers.startPssBytes)} MB (shared pages counted once). Peak RSS while measured, added up the same way: ` +
      `${workers.pairs.map(({ two }) => `${two.name} ${mb(two.peakRssBytes)} MB`).join(', ')}.`,
    `- Errors/non-2xx: ${workers.pairs.reduce((n, { one, two }) => n + one.failures + two.failures, 0)} (any fails the run).`,
    '',
  ];
}

function hostileSection(hostile: HostileResult): string[] {
  const side = (m: Measurement) => `${fixed(m.requestsPerSecond, 0)} req/s, p99 ${fixed(m.p99Ms, 2)} ms`;
  const health = (l: HostileResult['alone']['healthz']) =>
    `p50 ${fixed(l.p50Ms, 1)} ms, p99 ${fixed(l.p99Ms, 1)} ms, max ${fixed(l.maxMs, 1)} ms (${l.samples} probes)`;
  return [
    `**Hostile requests beside normal load** (${hostile.seconds} s each way; normal load: warm details of the ` +
      `large bundle at 20 connections; ${hostile.unreadClients} clients also sent the large bad quote and never ` +
      'read the answer)',
    '',
    ...table(
      [{ header: 'Attack' }, { header: 'Answers by status' }, { header: 'Largest answer', right: true }],
      hostile.attacks.map((a) => [
        a.title,
        Object.entries(a.statusCodes)
          .map(([status, count]) => `${status}: ${count}`)
          .join(', ') + (a.errors > 0 ? `, errors: ${a.errors}` : ''),
        `${fixed(a.largestAnswerBytes / 1024, 1)} KiB`,
      ]),
    ),
    '',
    `- Normal load alone: ${side(hostile.alone.normal)}; beside the attacks: ${side(hostile.beside.normal)}.`,
    `- /healthz alone: ${health(hostile.alone.healthz)}; beside: ${health(hostile.beside.healthz)}.`,
    `- Service RSS before the attacks ${mb(hostile.rssBeforeBytes)} MB, peak during them ` +
      `${mb(hostile.peakRssBytes)} MB.`,
    '',
  ];
}

export function toMarkdown(results: Results): string {
  const { machine } = results;
  const lines = [
    '# cpq benchmark',
    '',
    `Status: **${results.status}**. Command: \`${results.command}\`, started ${results.startedAt}, ` +
      `${fixed(results.seconds / 60, 1)} min, commit ${results.commit}.`,
    '',
    `Machine: ${machine.nproc} CPUs (nproc), ${machine.cpu}, ${machine.memoryGiB} GiB, Node ${machine.node}, ` +
      `Linux ${machine.kernel}. The machine is shared: compare ratios within one run, not absolute numbers ` +
      'across runs.',
    '',
    `Settings: ${Object.entries(results.settings)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}. Load scenarios: autocannon in the bench process ` +
      '(reading into one reused buffer, keeping no body), fixed concurrency, warm-up first; ' +
      'latencies are per response, sub-millisecond. Peak RSS: VmHWM of the measured process, reset before ' +
      'each scenario, with what the scenario added since its warm-up began (one process serves every scenario ' +
      'in turn, and its heap does not shrink between them). Growth: one request at a time.',
    '',
  ];
  const number = (header: string) => ({ header, right: true });
  for (const db of results.databases) {
    lines.push(
      `## ${db.dialect}`,
      '',
      `Catalogue: ${db.catalogue.bundles.toLocaleString('en-US')} bundles, ` +
        `${db.catalogue.rows.toLocaleString('en-US')} rows, loaded in ${fixed(db.catalogue.seconds)} s. ` +
        `Service RSS after start: ${mb(db.startRssBytes)} MB; peak over the run: ${mb(db.peakRssBytes)} MB.`,
      '',
      ...table(
        [
          { header: 'Scenario' },
          number('req/s'),
          number('p50 ms'),
          number('p99 ms'),
          number('CPU ms/req'),
          number('load CPU ms/req'),
          number('peak RSS MB (growth)'),
          number('errors/non-2xx'),
          number('vs ceiling'),
          { header: 'p99 < 50 ms' },
        ],
        db.scenarios.map((s) => [
          s.title,
          fixed(s.requestsPerSecond, 0),
          fixed(s.p50Ms, 2),
          fixed(s.p99Ms, 2),
          s.cpuMsPerRequest === undefined ? '' : fixed(s.cpuMsPerRequest, 3),
          s.loadCpuMsPerRequest === undefined ? '' : fixed(s.loadCpuMsPerRequest, 3),
          `${mb(s.peakRssBytes)} (+${mb(s.peakRssBytes - s.rssBeforeBytes)})`,
          `${s.failures}${s.requests === 0 ? ' (nothing answered in time)' : ''}`,
          s.ratioToCeiling === null ? 'n/a' : `${fixed(s.ratioToCeiling * 100, 0)}%`,
          verdict(s.p99Ms < p99LimitMs),
        ]),
      ),
      '',
      ...table(
        [{ header: 'Target' }, { header: 'Value' }, { header: 'Limit' }, { header: 'Verdict' }],
        db.targets.map((t) => [t.name, t.value, t.limit, verdict(t.pass)]),
      ),
      '',
    );
    if (db.ceilingRounds) {
      const { rounds, seconds, ratios, cpuRatios, serviceRssBeforeBytes, quoteRatios, quoteCpuRatios } =
        db.ceilingRounds;
      const times = (series: number[]) => series.map((r) => `${fixed(r, 2)}x`).join(', ');
      lines.push(
        `The ceiling, the large bundle's details${quoteRatios ? ' and the quote of 30 lines' : ''} were measured ` +
          `in ${rounds} alternating rounds of ${seconds} s each (their rows add the rounds up); details vs ceiling ` +
          `round by round: ${ratios.map((r) => `${fixed(r * 100, 0)}%`).join(', ')}` +
          (quoteRatios ? `; quote vs details: ${times(quoteRatios)}` : '') +
          `. CPU an answer, round by round: details ${times(cpuRatios)} the ceiling's` +
          (quoteCpuRatios ? `, the quote ${times(quoteCpuRatios)} details'` : '') +
          `; the service's RSS as each details round began: ${serviceRssBeforeBytes.map(mb).join(', ')} MB ` +
          '(where it is lower than the round before, the service gave memory back in the pause between, and that ' +
          'round runs on code V8 optimises again).',
        '',
      );
    }
    if (db.pagination) {
      const side = (m: Measurement) =>
        `${fixed(m.requestsPerSecond, 0)} req/s, p50 ${fixed(m.p50Ms, 2)} ms, p99 ${fixed(m.p99Ms, 2)} ms`;
      lines.push(
        `Side by side, connections interleaved: first page ${side(db.pagination.firstPage)}; ` +
          `deep page ${side(db.pagination.deepPage)}; ${db.pagination.failures} errors/non-2xx.`,
        '',
      );
    }
    if (db.hostile) lines.push(...hostileSection(db.hostile));
    if (db.configureHard) lines.push(...configureHardSection(db.configureHard));
    lines.push(...workersSection(db.workers ?? null));
    lines.push(
      ...growthTable(
        'Bundle details by option products, as clients ask (cached)',
        'Products',
        db.detailsBySize,
      ),
      ...growthTable(
        'Bundle details by option products, with `at` (never cached: built every time)',
        'Products',
        db.detailsBuiltBySize,
      ),
    );
    lines.push(
      ...growthTable('First page of GET /v1/bundles by bundles in the account', 'Bundles', db.listBySize),
      ...growthTable(
        'Configure with nothing chosen, by rules (12 options x 25 products), each searched',
        'Rules',
        db.configureByRules,
      ),
      ...growthTable(
        'Configure with nothing chosen, by option products (60 rules), each searched',
        'Products',
        db.configureByProducts,
      ),
      ...growthTable(
        'Priced-product search by entries in the book, `q` naming one product, as clients ask (cached)',
        'Entries',
        db.searchBySize ?? [],
      ),
      ...growthTable(
        'Priced-product search by entries in the book, `q=enterprise` (a third of the book matches), cached',
        'Entries',
        db.searchBroadBySize ?? [],
      ),
      ...growthTable(
        'Priced-product search by entries in the book, `q` naming one product, built every time (caches off)',
        'Entries',
        db.searchBuiltBySize ?? [],
      ),
      ...growthTable(
        'Priced-product search by entries in the book, `q=enterprise`, built every time (caches off)',
        'Entries',
        db.searchBroadBuiltBySize ?? [],
      ),
    );
    const growth = [
      growthSummary(db.detailsBySize, 'Option products, cached'),
      growthSummary(db.detailsBuiltBySize, 'Option products, built'),
      growthSummary(db.listBySize, 'Bundles'),
      growthSummary(db.configureByRules.slice(1), 'Configure rules'),
      growthSummary(db.configureByProducts, 'Configure option products'),
      growthSummary(db.searchBySize ?? [], 'Search, one product, cached'),
      growthSummary(db.searchBroadBySize ?? [], 'Search, a third of the book, cached'),
      growthSummary(db.searchBuiltBySize ?? [], 'Search, one product, built'),
      growthSummary(db.searchBroadBuiltBySize ?? [], 'Search, a third of the book, built'),
    ];
    lines.push(...growth.filter((g) => g !== '').map((g) => `- ${g}`));
    lines.push(...webhooksSection(db.webhooks));
    lines.push(...catalogueFileSection(db.catalogueFile));
    if (db.serviceRestarts > 0) {
      lines.push(
        `- The service was restarted ${db.serviceRestarts} time(s): a scenario left a backlog that had not ` +
          'cleared within a minute.',
      );
    }
    if (db.extraLoad) {
      lines.push(
        `- Extra load: ${db.extraLoad.bundles.toLocaleString('en-US')} tiny bundles, ` +
          `${db.extraLoad.rows.toLocaleString('en-US')} rows in ${fixed(db.extraLoad.seconds)} s.`,
      );
    }
    lines.push('');
  }
  // Sections open with a blank line of their own, so that none runs into a list before it; one blank line stays.
  const text = lines.join('\n').replace(/\n{3,}/g, '\n\n');
  return `${text.trimEnd()}\n`;
}

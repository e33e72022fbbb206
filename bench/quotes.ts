// Finalizing quotes: each finalize moves one approved quote, once, so it cannot be driven by autocannon's repeated
// request. The quotes are made first (saved and submitted), then finalized by 50 connections at once, each taking
// the next quote: a warm-up's worth unmeasured, as every scenario warms up first, then the rest, every latency kept.
import { type Measurement, percentile } from './load.ts';
import { BenchError, call, callOk } from './scenarios.ts';

/** Runs `work` on `items` with `connections` at once; answers each item's latency in ms and status. */
async function inParallel<T>(
  items: T[],
  connections: number,
  work: (item: T) => Promise<number>,
): Promise<{ latencies: number[]; statuses: number[] }> {
  const latencies: number[] = [];
  const statuses: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      const start = performance.now();
      statuses.push(await work(item));
      latencies.push(performance.now() - start);
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  return { latencies, statuses };
}

/**
 * `warmup + count` approved quotes of `body`, made 8 at a time; then every one finalized, `connections` at a time,
 * the first `warmup` unmeasured.
 */
export async function measureFinalize(
  baseUrl: string,
  key: string,
  body: string,
  counts: { warmup: number; count: number },
  connections: number,
  onPhase: (text: string) => void,
): Promise<Measurement> {
  const { warmup, count } = counts;
  const headers = { 'x-api-key': key };
  const finalize = async (id: string) => {
    const { status } = await call({ url: `${baseUrl}/v1/quotes/${id}/finalize`, method: 'POST', headers });
    return status;
  };
  onPhase(`making ${warmup + count} approved quotes`);
  const ids = Array.from({ length: warmup + count }, (_, i) => i);
  const quotes: string[] = [];
  await inParallel(ids, 8, async () => {
    const made = await callOk({ url: `${baseUrl}/v1/quotes`, method: 'POST', headers, body });
    await callOk({ url: `${baseUrl}/v1/quotes/${made.id}/submit`, method: 'POST', headers });
    quotes.push(made.id as string);
    return 200;
  });
  onPhase(`warm-up: finalizing ${warmup} quotes, ${connections} at once`);
  const warmed = await inParallel(quotes.splice(0, warmup), connections, finalize);
  const refused = warmed.statuses.filter((s) => s !== 200);
  if (refused.length > 0) throw new BenchError(`${refused.length} warm-up finalizes answered ${refused[0]}`);
  onPhase(`finalizing ${count} quotes, ${connections} at once`);
  const started = performance.now();
  const { latencies, statuses } = await inParallel(quotes, connections, finalize);
  const seconds = (performance.now() - started) / 1000;
  if (latencies.length !== count) throw new BenchError(`${latencies.length} of ${count} finalizes answered`);
  const sorted = Float64Array.from(latencies).sort();
  const statusCodes: Record<string, number> = {};
  for (const status of statuses) statusCodes[status] = (statusCodes[status] ?? 0) + 1;
  return {
    requests: count,
    seconds,
    requestsPerSecond: count / seconds,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    failures: statuses.filter((s) => s !== 200).length,
    unanswered: 0,
    statusCodes,
  };
}

// The /healthz probe of bench/hostile.ts, in a thread of its own: the bench's main thread drives the load and the
// attackers, and a probe waiting there for its turn would measure the bench's own event loop, not the service's.
// Asks /healthz (or `path`, with `headers`) one request at a time, `intervalMs` apart (default 50), until told to
// stop; answers the latencies and failures.
import { parentPort, workerData } from 'node:worker_threads';

const {
  baseUrl,
  path = '/healthz',
  headers = {},
  intervalMs = 50,
} = workerData as { baseUrl: string; path?: string; headers?: Record<string, string>; intervalMs?: number };
let stopped = false;
parentPort?.once('message', () => {
  stopped = true;
});

// The thread's first request also loads and compiles its HTTP client: that is the probe's own cost, not a wait
// in the service, so one request goes first unmeasured.
await fetch(`${baseUrl}${path}`, { headers }).then((response) => response.arrayBuffer());

const samples: number[] = [];
let failures = 0;
while (!stopped) {
  const started = performance.now();
  try {
    const response = await fetch(`${baseUrl}${path}`, { headers, signal: AbortSignal.timeout(30_000) });
    await response.arrayBuffer();
    if (response.ok) samples.push(performance.now() - started);
    else failures++;
  } catch {
    failures++;
  }
  await new Promise((resolve) => setTimeout(resolve, intervalMs));
}
parentPort?.postMessage({ samples, failures });

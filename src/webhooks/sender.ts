import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { nodeHttp as http } from '../shared/node-http.ts';
import { DestinationError, type Resolve, resolveDestination } from './destinations.ts';

export interface AttemptOutcome {
  /** The status answered, or null when none came. */
  responseStatus: number | null;
  durationMs: number;
  /** Why the attempt failed; null when it succeeded (a 2xx). */
  error: string | null;
}

export interface SendOptions {
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  allowPrivate: boolean;
  /** Ends the attempt early (shutdown); it then counts as not made. */
  signal?: AbortSignal;
  /** The name lookup; the system's unless a test stands in for DNS. */
  resolve?: Resolve;
}

// Connections are kept for the next attempt to the same receiver; each was made to a checked address.
const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 64 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 64 }),
};

/** Answers the checked address whatever the host, so the connection goes where the check looked. */
function pinnedLookup(address: string, family: number): LookupFunction {
  return (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all) {
      (callback as unknown as (e: null, all: { address: string; family: number }[]) => void)(null, [
        { address, family },
      ]);
    } else {
      callback(null, address, family);
    }
  };
}

function describe(error: unknown): string {
  const code = (error as { code?: string }).code;
  const message = error instanceof Error ? error.message : String(error);
  return code && !message.includes(code) ? `${message} (${code})` : message;
}

/** The most of a receiver's answer an attempt reads; the status is all it needs. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * POSTs one signed event: resolves and checks the destination, then waits up to timeoutMs in all for the response
 * headers; only a 2xx succeeds, a redirect fails. Up to MAX_ANSWER_BYTES of the body are read and dropped in the same
 * time so the connection can be reused: a longer or slower body costs the connection, never more time or memory.
 */
export async function send(options: SendOptions): Promise<AttemptOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  // A timer and a listener of our own, both let go when the attempt ends: AbortSignal.timeout would keep each
  // attempt's signals, listeners and timer alive for the whole timeout after a success, thousands of attempts' worth
  // at a busy rate.
  const attempt = new AbortController();
  const { signal } = attempt;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    attempt.abort();
  }, options.timeoutMs);
  const cut = () => attempt.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', cut, { once: true });
  if (options.signal?.aborted) cut();
  const aborted = new Promise<never>((_, reject) => {
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
  // Only the race below listens; a rejection after it is over goes unheard.
  aborted.catch(() => {});
  try {
    const url = new URL(options.url);
    const { address, family } = await Promise.race([
      resolveDestination(url, options.allowPrivate, options.resolve),
      aborted,
    ]);
    const status = await new Promise<number>((resolve, reject) => {
      const client = url.protocol === 'https:' ? https : http;
      const request = client.request(url, {
        method: 'POST',
        headers: { ...options.headers, 'content-length': String(Buffer.byteLength(options.body)) },
        agent: agents[url.protocol as 'http:' | 'https:'],
        lookup: pinnedLookup(address, family),
        signal,
      });
      let answered: number | undefined;
      request.on('response', (response) => {
        answered = response.statusCode ?? 0;
        let bytes = 0;
        response.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          // More than an acknowledgement needs: the connection goes rather than be drained for reuse.
          if (bytes > MAX_ANSWER_BYTES) response.destroy();
        });
        response.on('error', () => {});
        // The status decides; the body is read, for the connection's reuse, until it ends, passes the bound, or the
        // attempt's time (or shutdown's grace) runs out and the signal cuts the connection.
        response.on('close', () => resolve(answered ?? 0));
      });
      request.on('error', (error) => (answered === undefined ? reject(error) : resolve(answered)));
      request.end(options.body);
    });
    const ok = status >= 200 && status < 300;
    return { responseStatus: status, durationMs: elapsed(), error: ok ? null : `answered HTTP ${status}` };
  } catch (error) {
    if (timedOut) {
      return {
        responseStatus: null,
        durationMs: elapsed(),
        error: `no answer within ${options.timeoutMs} ms`,
      };
    }
    if (options.signal?.aborted) throw options.signal.reason;
    const reason =
      error instanceof DestinationError ? `destination not allowed: ${error.message}` : describe(error);
    return { responseStatus: null, durationMs: elapsed(), error: reason };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', cut);
  }
}

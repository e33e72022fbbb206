// The part of autocannon's programmatic API the bench uses; the package ships no types.
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  interface Options {
    /** Several URLs share the connections, dealt out in turn. */
    url: string | string[];
    method?: 'GET' | 'POST' | 'PUT';
    headers?: Record<string, string>;
    body?: string;
    /** Requests each connection sends in turn; fields left out are those above. */
    requests?: { body?: string }[];
    connections?: number;
    duration?: number;
    timeout?: number;
    /** Called with each client as it is made, before it connects. */
    setupClient?: (client: AutocannonClient) => void;
  }

  /** A connection's client (lib/httpClient.js): the members bench/load.ts replaces or calls. */
  export interface AutocannonClient extends EventEmitter {
    opts: { hostname: string; port: string | number; path: string; pipelining: number };
    conn: import('node:net').Socket;
    destroyed: boolean;
    parser: { execute(chunk: Buffer): unknown };
    pipelinedRequests: { addBody: (chunk: Buffer) => void; addByteCount: (bytes: number) => void };
    _connect(): void;
    _doRequest(): void;
  }

  interface Result {
    /** Seconds. */
    duration: number;
    /** Connection errors, timeouts included. */
    errors: number;
    non2xx: number;
    requests: { sent: number };
    statusCodeStats: Record<string, { count: number }>;
  }

  interface Instance extends EventEmitter, PromiseLike<Result> {
    on(
      event: 'response',
      listener: (client: AutocannonClient, statusCode: number, bytes: number, ms: number) => void,
    ): this;
    on(event: 'tick', listener: (sample: { counter: number; bytes: number }) => void): this;
  }

  function autocannon(options: Options): Instance;
  export default autocannon;
}

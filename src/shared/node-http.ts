/**
 * Node's http module as CommonJS has it. An ECMAScript import of node:http (`import ... from 'node:http'`) reads
 * every export to make its namespace, and reading `WebSocket`, `MessageEvent` and `CloseEvent` loads undici, which
 * nothing here uses: 14 MB more RSS for the life of a bare process. Take node:http from here instead.
 */
export const nodeHttp = process.getBuiltinModule('node:http');

/**
 * Node's http module as CommonJS has it: an ECMAScript import of node:http reads every export, and reading
 * `WebSocket` and its kin loads undici, which nothing here uses and which then stays resident. Import it from here.
 */
export const nodeHttp = process.getBuiltinModule('node:http');

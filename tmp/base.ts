import { readFileSync } from 'node:fs';
import { ConfigurePool } from '../src/quotes/configure.pool.ts';
const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]) / 1024;
const source = JSON.stringify({ options: [{ id: 'o', type: 'INCLUDED', minCount: null, maxCount: null, defaultProductId: null, products: ['a'] }], rules: [] });
const pool = new ConfigurePool({ threads: 2, budgetMs: 5000, maxSteps: 1e9 });
console.log('start', rss().toFixed(0));
await Promise.all([1, 2].map(() => pool.search({ modelKey: 'm', source, chosen: [], rejected: [] })));
console.log('two threads', rss().toFixed(0), pool.threads);
await pool.close();

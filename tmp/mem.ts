import { readFileSync } from 'node:fs';
import { ConfigurePool } from '../src/quotes/configure.pool.ts';
import { pigeonholeOptions, pigeonholeRules } from '../bench/rules.ts';
const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]) / 1024;
const ids = Array.from({ length: 10 }, (_, o) => `opt${o}`);
const options = pigeonholeOptions(10, 9).map((o, i) => ({ id: ids[i], name: o.name, type: o.type, minCount: 1, maxCount: 1, defaultProductId: null, products: o.products.map((p) => p.productId), productNames: o.products.map(p => p.properties.name) }));
const rules = pigeonholeRules(ids, 9).map((r, i) => ({ ...r, id: `r${i}` }));
const source = JSON.stringify({ options, rules });
const pool = new ConfigurePool({ threads: 2, budgetMs: Number(process.env.B ?? 1000), maxSteps: 1e9 });
console.log('start', rss().toFixed(0));
const t = setInterval(() => console.log('rss', rss().toFixed(0)), 500);
for (let round = 0; round < 2; round++) {
  const r = await Promise.all([0, 1, 2].map((i) => pool.search({ modelKey: 'm', source, chosen: [], rejected: [i + round * 3] })));
  console.log(r.map((x) => 'refused' in x ? x.refused : 'ok'), rss().toFixed(0));
}
clearInterval(t);
await pool.close();

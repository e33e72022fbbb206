import { readFileSync } from 'node:fs';
import { randomBundle } from '../bench/random-bundles.ts';
import { ConfigurePool } from '../src/quotes/configure.pool.ts';
const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]) / 1024;
const pool = new ConfigurePool({ threads: 2, budgetMs: 5000, maxSteps: 1e9 });
for (const rules of [60, 500]) for (const family of ['catalogue', 'random'] as const) {
  for (let b = 0; b < 3; b++) {
    const { options, rules: rs, click } = randomBundle({ options: 12, productsPerOption: 25, rules, family }, 20261124 + b);
    const source = JSON.stringify({ options, rules: rs });
    for (const chosen of [[], click]) {
      const t = performance.now();
      const r = await pool.search({ modelKey: `${rules}${family}${b}`, source, chosen, rejected: [] });
      console.log(rules, family, b, 'refused' in r ? r.refused : 'ok', (performance.now() - t).toFixed(0), 'ms', rss().toFixed(0));
    }
  }
}
await pool.close();

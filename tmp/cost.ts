import { randomBundle } from '../bench/random-bundles.ts';
import { ConfigurePool } from '../src/quotes/configure.pool.ts';
import { configure } from '../src/rules/configurator.ts';
const { options, rules, model, click } = randomBundle({ options: 12, productsPerOption: 25, rules: 60, family: 'catalogue' }, 20261124);
const source = JSON.stringify({ options, rules });
const pool = new ConfigurePool({ threads: 1, budgetMs: 60000, maxSteps: 1e9 });
const states = [[], click, click.slice(0, 1)];
for (let round = 0; round < 3; round++) {
  let t = performance.now(); let c0 = process.cpuUsage();
  for (let i = 0; i < 300; i++) configure(model, { chosen: states[i % 3] as number[], rejected: [] });
  const inline = (performance.now() - t) / 300;
  t = performance.now(); c0 = process.cpuUsage();
  for (let i = 0; i < 300; i++) await pool.search({ modelKey: 'k', source, chosen: states[i % 3] as number[], rejected: [] });
  const seq = (performance.now() - t) / 300;
  const cpuMain = process.cpuUsage(c0);
  t = performance.now();
  await Promise.all(Array.from({ length: 100 }, (_, i) => pool.search({ modelKey: 'k', source, chosen: states[i % 3] as number[], rejected: [] })));
  const par = (performance.now() - t) / 100;
  console.log(`inline ${inline.toFixed(3)} ms, pool one at a time ${seq.toFixed(3)} ms, pool 100 at once ${par.toFixed(3)} ms/req; process cpu during seq ${((cpuMain.user + cpuMain.system) / 1000 / 300).toFixed(3)} ms/req`);
}
await pool.close();

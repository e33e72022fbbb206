import { compileModel, configure, type ModelOption } from '../src/rules/configurator.ts';
import type { ModelRule } from '../src/rules/rule-logic.ts';
export function pigeonhole(n: number, m: number) {
  const products = Array.from({ length: m }, (_, p) => `P${p}`);
  const options: ModelOption[] = Array.from({ length: n }, (_, o) => ({ id: `opt${o}`, type: 'INCLUDED', minCount: null, maxCount: 1, defaultProductId: null, products }));
  const rules: ModelRule[] = options.flatMap((o) => products.map((p) => ({ id: `r${o.id}${p}`, name: 'x', message: null, kind: 'excludes' as const, when: { optionId: o.id, productId: p }, then: options.filter((q) => q !== o).map((q) => ({ optionId: q.id, productId: p })) })));
  return { options, rules };
}
for (const [n, m] of [[8,7],[10,9],[8,8],[9,9],[10,10]]) {
  const { options, rules } = pigeonhole(n, m);
  const model = compileModel(options, rules);
  const t = performance.now();
  const s = process.threadCpuUsage();
  let r = 'ok';
  try { const a = configure(model, { chosen: [], rejected: [] }, { maxSteps: Infinity, spent: () => { const u = process.threadCpuUsage(s); return u.user + u.system > 5e6; } }); r = `valid=${a.valid} ${a.states.slice(0,3)}`; } catch (e) { r = String(e); }
  const u = process.threadCpuUsage(s); console.log(n, m, rules.length, (performance.now() - t).toFixed(0), "ms wall", ((u.user+u.system)/1000).toFixed(0), "ms cpu", r);
}

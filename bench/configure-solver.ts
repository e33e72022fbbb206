// `node bench/configure-solver.ts [--bundles N] [--seed N] [--max-steps N] [--slowest MS]`: the configurator
// alone, in process, on seeded random bundles (bench/random-bundles.ts) of both families of rules. Per bundle it
// asks two questions a sales tool asks: nothing chosen yet, and a click (one to three products selected at random);
// --slowest prints each answer slower than MS. Prints, per shape, how many answers passed the step budget (422
// configuration_too_complex in the service) and the times of all (those over budget included). The same seed gives
// the same bundles, so a change to the solver can be measured before and after.
import { parseArgs } from 'node:util';
import { configure, SearchBudgetExceeded } from '../src/rules/configurator.ts';
import { type RandomShape, randomBundle } from './random-bundles.ts';

const { values } = parseArgs({
  options: {
    bundles: { type: 'string', default: '100' },
    seed: { type: 'string', default: '1' },
    'max-steps': { type: 'string', default: '1000000' },
    slowest: { type: 'string' },
  },
});
const bundles = Number(values.bundles);
const baseSeed = Number(values.seed);
const maxSteps = Number(values['max-steps']);

const shapes: RandomShape[] = [
  { options: 12, productsPerOption: 25, rules: 0, family: 'catalogue' },
  { options: 12, productsPerOption: 25, rules: 60, family: 'catalogue' },
  { options: 12, productsPerOption: 25, rules: 500, family: 'catalogue' },
  { options: 6, productsPerOption: 5, rules: 60, family: 'catalogue' },
  { options: 12, productsPerOption: 10, rules: 60, family: 'catalogue' },
  { options: 12, productsPerOption: 25, rules: 60, family: 'random' },
  { options: 12, productsPerOption: 25, rules: 500, family: 'random' },
];

const percentile = (sorted: number[], q: number) =>
  sorted.length === 0
    ? Number.NaN
    : (sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number);

const rows: string[] = [];
for (const shape of shapes) {
  const times: number[] = [];
  let over = 0;
  let invalid = 0;
  for (let b = 0; b < bundles; b++) {
    const { model, click } = randomBundle(shape, baseSeed * 1_000_003 + b);
    for (const chosen of [[], click]) {
      // The answer is a function of the request alone: the least of three runs is its cost, without the pauses a
      // shared machine adds (an answer over budget is timed once).
      let least = Number.POSITIVE_INFINITY;
      const started = performance.now();
      try {
        for (let run = 0; run < 3; run++) {
          const began = performance.now();
          const answer = configure(model, { chosen, rejected: [] }, { maxSteps });
          least = Math.min(least, performance.now() - began);
          if (run === 0 && !answer.valid) invalid++;
        }
      } catch (error) {
        if (!(error instanceof SearchBudgetExceeded)) throw error;
        over++;
        least = performance.now() - started;
      }
      times.push(least);
      if (values.slowest !== undefined && least > Number(values.slowest)) {
        process.stderr.write(
          `slow: ${shape.rules} ${shape.family} rules, bundle ${b}, ${chosen.length} chosen: ${least.toFixed(1)} ms\n`,
        );
      }
    }
  }
  times.sort((a, b) => a - b);
  const ms = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a');
  const products = shape.options * shape.productsPerOption;
  const row =
    `| ${shape.options} x ${shape.productsPerOption} (${products}) | ${shape.rules} ${shape.family} | ${bundles * 2} | ${over} | ` +
    `${invalid} | ${ms(percentile(times, 0.5))} | ${ms(percentile(times, 0.99))} | ${ms(times[times.length - 1] ?? Number.NaN)} |`;
  rows.push(row);
  process.stderr.write(`${row}\n`);
}
console.log(
  `Configure alone, ${bundles} random bundles per shape (seed ${baseSeed}), nothing chosen and one click each, ` +
    `budget ${maxSteps} steps\n`,
);
console.log('| Options x products | Rules | Requests | Over budget | Not valid | p50 ms | p99 ms | Max ms |');
console.log('| ------------------ | ----- | -------: | ----------: | --------: | -----: | -----: | -----: |');
for (const row of rows) console.log(row);

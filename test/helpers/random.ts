/**
 * mulberry32: a small, fast generator that draws the same numbers from the same seed on every run, for the fuzzer's
 * replayable steps and the benchmark's varied yet identical catalogue.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/**
 * fast-check settings for a property: the committed seed, so npm test draws the same cases on every run. npm run
 * fuzz sets CPQ_PROPERTY_SEED, and CPQ_PROPERTY_SCALE to multiply the runs, to explore new ones.
 */
export function propertySettings(committedSeed: number, numRuns: number): { seed: number; numRuns: number } {
  const explored = process.env.CPQ_PROPERTY_SEED;
  if (explored === undefined) return { seed: committedSeed, numRuns };
  return { seed: Number(explored), numRuns: numRuns * Number(process.env.CPQ_PROPERTY_SCALE ?? 1) };
}

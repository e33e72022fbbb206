#!/usr/bin/env -S node --max-semi-space-size=8 --no-memory-reducer
// The `cpq` command (src/cli.ts), as npm start, npm run cpq and the package's bin run it. JavaScript, so that the
// project's TypeScript loads stripped of its types from a cache of its own (bin/stripped-typescript.js): Node's
// TypeScript parser is loaded only on the first start after a change, and nothing of the cache stays in memory.

// Checked before anything loads: an older Node would fail on the first import with an error that names no cause.
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write(`cpq needs Node.js 24 or later; this is Node.js ${process.versions.node}.\n`);
  process.exit(2);
}
const { loadStrippedTypeScript } = await import('./stripped-typescript.js');
loadStrippedTypeScript();
const { runCommandLine } = await import('../src/cli.ts');
await runCommandLine();

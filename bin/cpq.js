#!/usr/bin/env -S node --max-semi-space-size=8
// The `cpq` command (src/cli.ts), as npm start, npm run cpq and the package's bin run it. JavaScript, so that Node's
// compile cache is on before the first TypeScript file loads: a file found in the cache needs no type stripping,
// and without one to strip Node never loads its TypeScript parser, which would stay in memory for the process's
// life (~17 MB). The cache is NODE_COMPILE_CACHE's folder, else node-compile-cache in the system's temporary
// folder; entries are checked against the source they were made from. Where no folder can be written, the cache
// is off and the command runs as before. NODE_DISABLE_COMPILE_CACHE=1 turns it off.
import { enableCompileCache } from 'node:module';

enableCompileCache();
const { runCommandLine } = await import('../src/cli.ts');
await runCommandLine();

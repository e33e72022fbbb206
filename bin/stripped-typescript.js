// The project's TypeScript, loaded stripped of its types from a cache of its own on disk (bin/cpq.js); JavaScript,
// since it runs before any TypeScript can. Node's type stripper and its compile cache both stay resident for the
// process's life; this keeps only the stripped text, named by a hash of the Node version and the source.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { registerHooks, stripTypeScriptTypes } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where the stripped files are kept: CPQ_TYPESCRIPT_CACHE, else beside the project's dependencies, where tools keep
 * their caches (an install whose node_modules cannot be written can name a folder that can).
 */
export const defaultFolder =
  process.env.CPQ_TYPESCRIPT_CACHE ||
  fileURLToPath(new URL('../node_modules/.cache/cpq-typescript/', import.meta.url));

/**
 * Node's stripTypeScriptTypes (what its loader does to a .ts file, in the same mode), without the warning that
 * this API, unlike the loader, is experimental: one line on each first start after a change would only alarm.
 * @param {string} source
 * @returns {string}
 */
function strip(source) {
  const { emitWarning } = process;
  /** @type {(warning: string | Error, ...rest: any[]) => void} */
  const quiet = (warning, ...rest) => {
    if (!String(warning).startsWith('stripTypeScriptTypes')) emitWarning.call(process, warning, ...rest);
  };
  process.emitWarning = quiet;
  try {
    return stripTypeScriptTypes(source, { mode: 'strip' });
  } finally {
    process.emitWarning = emitWarning;
  }
}

/**
 * `source` stripped of its types: read from `folder` when this Node stripped the same source before, else stripped
 * by `stripTypes` and written there (by rename, so a reader never sees half a file). Where the folder cannot be
 * written, each start strips again.
 * @param {string} source
 * @param {string} [folder]
 * @param {(source: string) => string} [stripTypes]
 * @returns {string}
 */
export function strippedSource(source, folder = defaultFolder, stripTypes = strip) {
  const name = createHash('sha256').update(process.version).update('\0').update(source).digest('hex');
  const file = join(folder, `${name}.js`);
  try {
    return readFileSync(file, 'utf8');
  } catch {
    // not stripped before
  }
  const stripped = stripTypes(source);
  try {
    mkdirSync(folder, { recursive: true });
    const partial = `${file}.${process.pid}.tmp`;
    writeFileSync(partial, stripped);
    renameSync(partial, file);
  } catch {
    // a read-only install: stripped again at the next start
  }
  return stripped;
}

/**
 * From now on, the project's .ts modules load through strippedSource; anything else loads as Node would.
 * @param {string} [folder]
 */
export function loadStrippedTypeScript(folder = defaultFolder) {
  registerHooks({
    load(url, context, next) {
      if (!url.startsWith('file:') || !url.endsWith('.ts') || url.includes('/node_modules/')) {
        return next(url, context);
      }
      const source = readFileSync(fileURLToPath(url), 'utf8');
      return { format: 'module', source: strippedSource(source, folder), shortCircuit: true };
    },
  });
}

// The console's files, built from console/src by esbuild in memory the first time the console is asked for, and
// kept for the life of the process: nothing to run besides `npm install` and `npm start`, and no built copy on disk
// that could fall behind its source. File names carry a hash of their contents, so they can be cached for ever.
import { createHash } from 'node:crypto';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface ConsoleFile {
  body: Buffer;
  contentType: string;
  etag: string;
}

export interface ConsoleFiles {
  /** The page every console URL answers with (the console routes in the browser). */
  page: ConsoleFile;
  /** The scripts and styles by file name, served under /console/assets/. */
  assets: ReadonlyMap<string, ConsoleFile>;
}

const source = fileURLToPath(new URL('../../console/', import.meta.url));

const contentTypes: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

function file(body: Buffer | string, contentType: string): ConsoleFile {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body);
  return { body: bytes, contentType, etag: `"${createHash('sha256').update(bytes).digest('base64url')}"` };
}

/** Builds the console: one script and one style sheet, minified, and the page that loads them. */
export async function buildConsole(): Promise<ConsoleFiles> {
  // Loaded here, not at the top: a service that is never asked for its console never starts esbuild.
  const { build } = await import('esbuild');
  const result = await build({
    absWorkingDir: source,
    entryPoints: [join(source, 'src/main.tsx')],
    tsconfig: join(source, 'tsconfig.json'),
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['chrome115', 'firefox115', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    // @cpq/client's TypeScript source, as console/tsconfig.json reads it: its built files exist only once packed.
    conditions: ['source'],
    outdir: join(source, 'assets'),
    entryNames: '[name]-[hash]',
    legalComments: 'none',
    logLevel: 'silent',
    write: false,
  });
  const assets = new Map<string, ConsoleFile>();
  for (const output of result.outputFiles) {
    const name = basename(output.path);
    const type = contentTypes[name.slice(name.lastIndexOf('.'))];
    if (type !== undefined) assets.set(name, file(Buffer.from(output.contents), type));
  }
  const names = [...assets.keys()];
  const script = names.find((name) => name.endsWith('.js'));
  const style = names.find((name) => name.endsWith('.css'));
  if (script === undefined || style === undefined)
    throw new Error('the console build made no script or style');
  const page = file(
    '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
      '<meta name="viewport" content="width=device-width, initial-scale=1">' +
      '<meta name="color-scheme" content="light dark"><title>cpq console</title>' +
      `<link rel="icon" href="data:,"><link rel="stylesheet" href="/console/assets/${style}">` +
      `<script type="module" src="/console/assets/${script}"></script></head>` +
      '<body><div id="app"></div><noscript>The cpq console needs JavaScript.</noscript></body></html>',
    'text/html; charset=utf-8',
  );
  return { page, assets };
}

let built: Promise<ConsoleFiles> | undefined;

/** The console's files, built once per process; a failed build is tried again on the next request. */
export function consoleFiles(): Promise<ConsoleFiles> {
  built ??= buildConsole().catch((error: unknown) => {
    built = undefined;
    throw error;
  });
  return built;
}

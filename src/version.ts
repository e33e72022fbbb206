import { readFileSync } from 'node:fs';

/** The version in package.json: what `cpq --version`, the OpenAPI document and cpq_build_info say. */
export const packageVersion = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

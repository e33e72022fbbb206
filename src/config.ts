import { type Static, Type } from 'typebox';
import { Value } from 'typebox/value';

export const Config = Type.Object({
  port: Type.Integer({ minimum: 0, maximum: 65535 }),
  host: Type.String({ minLength: 1 }),
  databaseUrl: Type.Union([Type.String({ pattern: '^postgres(ql)?://' }), Type.Null()]),
  sqlitePath: Type.String({ minLength: 1 }),
  logLevel: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
  ),
  bodyLimit: Type.Integer({ minimum: 1024 }),
});
export type Config = Static<typeof Config>;

export class ConfigError extends Error {}

/** Reads the environment once, at start-up; a bad value stops the process with a message naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const candidate = {
    port: env.PORT === undefined ? 3000 : Number(env.PORT),
    host: env.HOST ?? '127.0.0.1',
    databaseUrl: env.DATABASE_URL || null,
    sqlitePath: env.SQLITE_PATH ?? './data/cpq.sqlite',
    logLevel: env.LOG_LEVEL ?? 'info',
    bodyLimit: env.BODY_LIMIT === undefined ? 1024 * 1024 : Number(env.BODY_LIMIT),
  };
  const names: Record<string, string> = {
    port: 'PORT',
    host: 'HOST',
    databaseUrl: 'DATABASE_URL',
    sqlitePath: 'SQLITE_PATH',
    logLevel: 'LOG_LEVEL',
    bodyLimit: 'BODY_LIMIT',
  };
  const [first] = Value.Errors(Config, candidate);
  if (first) {
    const field = first.instancePath.split('/')[1] ?? '';
    throw new ConfigError(`${names[field] ?? field} is not valid: ${first.message}`);
  }
  return candidate as Config;
}

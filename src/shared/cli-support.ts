// What src/cli.ts gives the commands kept beside their features (catalogue files, price books), and what they share.
import { once } from 'node:events';
import type { Db } from '../db/database.ts';

/** Exit codes of commands that write, beyond 0 (done), 1 (a fault) and 2 (bad arguments). */
export const EXIT_INVALID_FILE = 3;
export const EXIT_CONFLICT = 4;

export interface CliSupport {
  withDatabase: <T>(work: (db: Db) => Promise<T>) => Promise<T>;
  accountOption: (value: unknown) => string;
  usageError: (message: string) => Error;
}

/** A command's parsed options. */
export type Values = Record<string, string | boolean | undefined>;

/** Writes to stdout, waiting when the pipe is full. */
export async function write(text: string): Promise<void> {
  if (!process.stdout.write(text)) await once(process.stdout, 'drain');
}

import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

export const projectRoot = fileURLToPath(new URL('../..', import.meta.url));

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServerProcess {
  child: ChildProcess;
  /** http://127.0.0.1:<port>, as the server logged it. */
  address: string;
  stdout(): string;
  stderr(): string;
  /** stdout, line by line, parsed: the service logs JSON only. */
  logs(): Record<string, unknown>[];
  waitForLog(match: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<void>;
  exited: Promise<Exit>;
}

/**
 * Runs `cpq serve` (with `args`) as a real process on a free port, the way an operator starts it; with
 * `openFiles`, under that limit on open descriptors (`ulimit -n`), the shell then giving its place to Node.
 */
export async function startServer(
  env: Record<string, string>,
  args: string[] = [],
  { openFiles }: { openFiles?: number } = {},
): Promise<ServerProcess> {
  const command = [process.execPath, 'src/cli.ts', 'serve', ...args];
  const [file, ...argv] =
    openFiles === undefined
      ? command
      : ['/bin/sh', '-c', `ulimit -n ${openFiles} && exec "$@"`, 'sh', ...command];
  const child = spawn(file as string, argv, {
    cwd: projectRoot,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', DATABASE_URL: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = once(child, 'exit').then(([code, signal]) => ({ code, signal }) as Exit);
  const logs = () =>
    stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);

  const waitForLog = async (match: (line: Record<string, unknown>) => boolean, timeoutMs = 15_000) => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (logs().some(match)) return;
      if (child.exitCode !== null) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`no such log line; exit ${child.exitCode}\nstdout:\n${stdout}\nstderr:\n${stderr}`);
  };

  try {
    // Generous: on a loaded machine loading the modules alone has taken over 15 s.
    await waitForLog((line) => line.msg === 'cpq is ready', 60_000);
  } catch (error) {
    // A server that was slow to start would otherwise live on, unowned, and keep the test process from exiting.
    child.kill('SIGKILL');
    throw error;
  }
  const ready = logs().find((line) => line.msg === 'cpq is ready');
  return {
    child,
    address: String(ready?.address),
    stdout: () => stdout,
    stderr: () => stderr,
    logs,
    waitForLog,
    exited,
  };
}

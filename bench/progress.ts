// The progress display goes to stderr so stdout stays free for the summary. On a terminal one line is redrawn
// in place; in a log (CI, a pipe) a line is written on every change of phase and at most every few seconds.
const interactive = process.stderr.isTTY === true;
const logEveryMs = 3000;

let lastLogged = 0;
let lastLine = '';
let label = '';

function show(line: string, force: boolean): void {
  if (line === lastLine) return;
  lastLine = line;
  if (interactive) {
    process.stderr.write(`\r\x1b[2K${line}`);
    return;
  }
  const now = Date.now();
  if (force || now - lastLogged >= logEveryMs) {
    lastLogged = now;
    process.stderr.write(`${line}\n`);
  }
}

const count = (n: number) => n.toLocaleString('en-US');

export const progress = {
  /** Names the database the following lines are about. */
  database(name: string): void {
    label = `[${name}]`;
  },
  phase(text: string): void {
    show(`${label} ${text}`, true);
  },
  rows(what: string, done: number, total: number): void {
    const percent = total === 0 ? 100 : Math.floor((done / total) * 100);
    show(`${label} ${what}: ${count(done)} / ${count(total)} rows (${percent}%)`, done === total);
  },
  scenario(index: number, total: number, name: string, stage: string, first = false): void {
    show(`${label} scenario ${index} of ${total}: ${name}: ${stage}`, first);
  },
  /** Ends the redrawn line so a message can follow on its own line. */
  done(text: string): void {
    if (interactive) process.stderr.write('\r\x1b[2K');
    lastLine = '';
    process.stderr.write(`${label} ${text}\n`);
  },
};

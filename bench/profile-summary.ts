// Where a V8 CPU profile (node --cpu-prof) spends its busy time: self time by package or source area, the
// hottest functions, and inclusive time of the project's own functions (which handler, which query).
// Usage: node bench/profile-summary.ts <directory or .cpuprofile file>
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function areaOf({ functionName, url }: ProfileNode['callFrame']): string {
  const dependency = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (dependency) return dependency[1] as string;
  const own = /\/(src|bench|test)\/(?:([^/]+)\/)?/.exec(url);
  if (own) return own[2] && !own[2].includes('.') ? `${own[1]}/${own[2]}` : (own[1] as string);
  if (url.startsWith('node:')) return 'node internals';
  if (url !== '') return url;
  // Code built at run time has no URL: fast-json-stringify names its serializers anonymousN, and the Ajv
  // validators it runs to pick an anyOf branch are validateN.
  if (/^anonymous\d+$/.test(functionName)) return 'fast-json-stringify (generated serializers)';
  if (/^validate\d+$/.test(functionName)) return 'ajv (generated validators)';
  return `native ${functionName || '(anonymous)'}`;
}

function label({ functionName, url, lineNumber }: ProfileNode['callFrame']): string {
  const where = url.replace(/^.*\/(node_modules|src|bench)\//, '$1/').replace(/^file:\/\//, '');
  return `${functionName || '(anonymous)'} ${where ? `${where}:${lineNumber + 1}` : ''}`.trim();
}

function top(totals: Map<string, number>, busy: number, count: number): string[] {
  return [...totals.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, micros]) => `  ${((micros / busy) * 100).toFixed(1).padStart(5)}%  ${name}`);
}

export function summarizeProfile(profile: Profile): string {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const selfByArea = new Map<string, number>();
  const selfByFunction = new Map<string, number>();
  const inclusiveOwn = new Map<string, number>();
  const add = (map: Map<string, number>, key: string, micros: number) =>
    map.set(key, (map.get(key) ?? 0) + micros);
  let busy = 0;
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    const micros = profile.timeDeltas[i] ?? 0;
    if (!node || node.callFrame.functionName === '(idle)') return;
    busy += micros;
    add(selfByArea, areaOf(node.callFrame), micros);
    add(selfByFunction, label(node.callFrame), micros);
    // Each of our own functions on the stack counts once per sample, however deep the recursion.
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)?.callFrame;
      if (frame && /\/src\//.test(frame.url)) seen.add(label(frame));
    }
    for (const name of seen) add(inclusiveOwn, name, micros);
  });
  return [
    `busy ${(busy / 1e6).toFixed(1)} s of CPU, start-up included; shares below are of busy time`,
    'self time by area:',
    ...top(selfByArea, busy, 15),
    'hottest functions (self):',
    ...top(selfByFunction, busy, 20),
    'own functions (inclusive):',
    ...top(inclusiveOwn, busy, 20),
  ].join('\n');
}

export function summarizeProfiles(path: string): string {
  const files = statSync(path).isDirectory()
    ? readdirSync(path)
        .filter((f) => f.endsWith('.cpuprofile'))
        .map((f) => join(path, f))
    : [path];
  return files
    .map((file) => `${file}\n${summarizeProfile(JSON.parse(readFileSync(file, 'utf8')) as Profile)}`)
    .join('\n\n');
}

if (import.meta.main) {
  const path = process.argv[2];
  if (!path) throw new Error('usage: node bench/profile-summary.ts <directory or .cpuprofile file>');
  console.log(summarizeProfiles(path));
}

// A diagnostic to preload into the service (`CPQ_BENCH_NODE_FLAGS='--import ./bench/loop-stalls.ts'`): each second
// it appends to loop-stalls-<pid>.log in the system's temporary folder the longest stall of the event loop, the
// CPU time the process spent during that stall, its CPU time in the second, the longest GC pause and its memory.
// On a shared machine a stall is often time the OS gave to other processes: the CPU spent within it says how much
// of it was the service's own synchronous work.
import { appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';

const file = join(tmpdir(), `loop-stalls-${process.pid}.log`);
const everyMs = 5;
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
let last = { wall: performance.now(), cpu: cpuMs() };
let second = last;
let stall = { wall: 0, cpu: 0 };
let gcMs = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcMs = Math.max(gcMs, entry.duration);
}).observe({ entryTypes: ['gc'] });
setInterval(() => {
  const now = { wall: performance.now(), cpu: cpuMs() };
  const wall = now.wall - last.wall - everyMs;
  if (wall > stall.wall) stall = { wall, cpu: Math.min(wall, now.cpu - last.cpu) };
  last = now;
}, everyMs).unref();
setInterval(() => {
  const now = { wall: performance.now(), cpu: cpuMs() };
  const { rss, heapUsed, heapTotal, arrayBuffers } = process.memoryUsage();
  const mb = (bytes: number) => (bytes / 1e6).toFixed(0);
  appendFileSync(
    file,
    `${new Date().toISOString()} stall ${stall.wall.toFixed(0)} ms (CPU ${stall.cpu.toFixed(0)} ms), ` +
      `CPU ${(((now.cpu - second.cpu) / (now.wall - second.wall)) * 1000).toFixed(0)} ms/s, ` +
      `longest GC ${gcMs.toFixed(0)} ms; RSS ${mb(rss)} MB, heap ${mb(heapUsed)}/${mb(heapTotal)} MB, ` +
      `array buffers ${mb(arrayBuffers)} MB\n`,
  );
  second = now;
  stall = { wall: 0, cpu: 0 };
  gcMs = 0;
}, 1000).unref();

/**
 * Runs `work` at once and then every `intervalMs` until the returned stop is called; stop waits for a run under
 * way. A turn that comes while the last run is still under way is skipped, and a failed run (the database away) is
 * reported and tried again at the next turn. The timer does not keep the process alive.
 */
export function repeatEvery(
  intervalMs: number,
  work: () => Promise<unknown>,
  onError: (error: unknown) => void,
): () => Promise<void> {
  let running: Promise<unknown> | null = null;
  const run = () => {
    if (running !== null) return;
    running = work()
      .catch(onError)
      .finally(() => {
        running = null;
      });
  };
  run();
  const timer = setInterval(run, intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}

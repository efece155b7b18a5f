/**
 * Polling for tests that watch another process or a background loop (a cleaner, a
 * rebalance, a worker writing files): no fixed sleeps, a clear message on timeout.
 */

/**
 * Resolves once `check` returns a value other than undefined. A check that throws is
 * retried (its last error is reported on timeout), so checks may read things that do
 * not exist yet. For the same reason an `expect` inside `check` proves nothing when it
 * fails on one poll and holds on a later one: a property that must hold at every poll
 * is collected inside and asserted after the wait.
 */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

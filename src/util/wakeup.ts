/**
 * An interruptible wait for poll loops: a source task's `poll()` may wait for data, but
 * must settle promptly after `stop()` (see connect/api/source-task.ts; the connector
 * API exports this class), and the group consumer's loops wait between fetches and
 * heartbeats. A loop waits with `wakeup.wait(ms)`; `wakeup.wake()` (from stop(), or
 * when there is work) resolves the pending wait at once. The timer is unref'd so a
 * forgotten wait never holds the process.
 */
export class Wakeup {
  private pending: { resolve: () => void; timer: NodeJS.Timeout } | null = null;
  private woken = false;

  /** Resolve after `ms`, or as soon as wake() is called (also if called just before). */
  wait(ms: number): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    // One waiter at a time: a second wait ends the first (poll never overlaps itself).
    if (this.pending !== null) this.wake();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pending = null;
        resolve();
      }, ms);
      timer.unref();
      this.pending = { resolve, timer };
    });
  }

  /**
   * End the current wait now. With no wait in progress, the next wait returns at once,
   * so a wake that races ahead of the wait is not lost.
   */
  wake(): void {
    const p = this.pending;
    if (p === null) {
      this.woken = true;
      return;
    }
    this.pending = null;
    clearTimeout(p.timer);
    p.resolve();
  }
}

/**
 * Timers are injected like the clock, so session timeouts, rebalance delays and
 * flush intervals can be driven by tests without sleeping.
 */
import { type Clock, ManualClock } from './clock.ts';

export interface Timers {
  /** Runs fn after delayMs; the returned function cancels it (idempotent). */
  schedule(delayMs: number, fn: () => void): () => void;
}

export const systemTimers: Timers = {
  schedule(delayMs, fn) {
    const handle = setTimeout(fn, Math.max(0, delayMs));
    handle.unref?.();
    return () => clearTimeout(handle);
  },
};

/** Timers that fire only when the test advances the clock. */
export class ManualTimers implements Timers {
  readonly clock: ManualClock;
  private queue: Array<{ at: number; seq: number; fn: () => void; cancelled: boolean }> = [];
  private seq = 0;

  constructor(clock: Clock = new ManualClock()) {
    this.clock = clock instanceof ManualClock ? clock : new ManualClock(clock.now());
  }

  schedule(delayMs: number, fn: () => void): () => void {
    const entry = {
      at: this.clock.now() + Math.max(0, delayMs),
      seq: this.seq++,
      fn,
      cancelled: false,
    };
    this.queue.push(entry);
    return () => {
      entry.cancelled = true;
    };
  }

  /** Moves time forward, firing due timers in time order (timers they schedule included). */
  advance(ms: number): void {
    const target = this.clock.now() + ms;
    for (;;) {
      this.queue = this.queue.filter((e) => !e.cancelled);
      const due = this.queue
        .filter((e) => e.at <= target)
        .sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.queue.splice(this.queue.indexOf(due), 1);
      if (due.at > this.clock.now()) this.clock.set(due.at);
      due.fn();
    }
    this.clock.set(target);
  }

  /** Number of live timers, for leak checks in tests. */
  get pending(): number {
    return this.queue.filter((e) => !e.cancelled).length;
  }
}

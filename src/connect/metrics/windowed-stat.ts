/**
 * Windowed statistics for metrics, read at scrape time: Kafka's Sensor stats (Avg,
 * Min, Max, Rate over `metrics.sample.window.ms` windows, two samples kept) made cheap
 * for the hot path.
 *
 * Cost model: `record` is two additions and two compares, with no clock read and no
 * allocation, because it runs per batch on the task loops. The window rolls only
 * when a scrape reads the stat: a read finds the current window older than the
 * window length, keeps it as the previous one and opens a new one. So a value read
 * covers the previous and the current window, between one and two window lengths of
 * history when scrapes come more often than the window, and everything since the
 * last roll when nobody scraped for a while (nobody was looking at it either).
 *
 * No samples: avg, min and max are NaN, as Kafka's Avg, Min and Max report without
 * samples.
 */
import type { Clock } from '../../util/clock.ts';

/** Kafka's metrics.sample.window.ms default. */
export const SAMPLE_WINDOW_MS = 30_000;

export class WindowedStat {
  private count = 0;
  private sum = 0;
  private min = Number.POSITIVE_INFINITY;
  private max = Number.NEGATIVE_INFINITY;
  private previousCount = 0;
  private previousSum = 0;
  private previousMin = Number.POSITIVE_INFINITY;
  private previousMax = Number.NEGATIVE_INFINITY;
  private windowStart: number;

  constructor(
    private readonly clock: Clock,
    private readonly windowMs = SAMPLE_WINDOW_MS,
  ) {
    this.windowStart = clock.now();
  }

  record(value: number): void {
    this.count++;
    this.sum += value;
    if (value < this.min) this.min = value;
    if (value > this.max) this.max = value;
  }

  /** Average over the windows read (NaN without samples). */
  avg(): number {
    this.roll();
    const n = this.count + this.previousCount;
    return n === 0 ? Number.NaN : (this.sum + this.previousSum) / n;
  }

  /** Minimum over the windows read (NaN without samples). */
  minValue(): number {
    this.roll();
    const m = Math.min(this.min, this.previousMin);
    return m === Number.POSITIVE_INFINITY ? Number.NaN : m;
  }

  /** Maximum over the windows read (NaN without samples). */
  maxValue(): number {
    this.roll();
    const m = Math.max(this.max, this.previousMax);
    return m === Number.NEGATIVE_INFINITY ? Number.NaN : m;
  }

  private roll(): void {
    const now = this.clock.now();
    if (now - this.windowStart < this.windowMs) return;
    this.previousCount = this.count;
    this.previousSum = this.sum;
    this.previousMin = this.min;
    this.previousMax = this.max;
    this.count = 0;
    this.sum = 0;
    this.min = Number.POSITIVE_INFINITY;
    this.max = Number.NEGATIVE_INFINITY;
    this.windowStart = now;
  }
}

/**
 * A per-second rate of a total that only grows (a counter the hot path increments),
 * computed when read: the growth since the start of the previous window over the time
 * since then. Reading marks a new window when the current one is a window old.
 */
export class WindowedRate {
  private readonly marks: Array<{ at: number; total: number }>;

  constructor(
    private readonly clock: Clock,
    private readonly windowMs = SAMPLE_WINDOW_MS,
  ) {
    this.marks = [{ at: clock.now(), total: 0 }];
  }

  /** Per second, given the total now. */
  read(total: number): number {
    const now = this.clock.now();
    const last = this.marks[this.marks.length - 1]!;
    if (now - last.at >= this.windowMs) {
      this.marks.push({ at: now, total });
      if (this.marks.length > 2) this.marks.shift();
    }
    const first = this.marks[0]!;
    const elapsed = now - first.at;
    return elapsed <= 0 ? 0 : ((total - first.total) * 1000) / elapsed;
  }
}

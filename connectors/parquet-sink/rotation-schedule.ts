/**
 * When `rotate.schedule.interval.ms` closes a partition's files: Confluent's rule
 * (kafka-connect-storage-common's DateTimeUtils.getNextTimeAdjustedByDay, which its
 * TopicPartitionWriter applies to the wall clock in `timezone`):
 *
 *   start = the first instant of the local day holding `now`
 *   day   = the first instant of the next local day - start  (23 h or 25 h across DST)
 *   next  = start + min(day, (floor((now - start) / interval) + 1) * interval)
 *
 * So the schedule restarts at every local midnight, and its steps are elapsed time
 * since that midnight, not wall-clock readings. In Europe/Paris: a 1 h interval closes
 * files on the local hour, DST days included; a 7 h interval at 07:00, 14:00, 21:00
 * and midnight, but at 08:00, 15:00 and 22:00 on the day clocks go forward; a 24 h
 * interval at midnight, and on the 25-hour day clocks go back at 23:00 too; an
 * interval longer than a day at every midnight. In UTC an interval dividing a day
 * gives the plain multiples of the interval. The rule is Confluent's exactly, so a
 * config moved from its connector rotates at the same instants.
 *
 * Pure: depends only on `now`, so the TopicPartitionWriter computes the boundary when
 * a group opens (tests drive it with a ManualClock). Offsets come from path-format.ts,
 * the zone arithmetic the TimeBasedPartitioner uses too.
 */
import { PathFormatter } from './path-format.ts';

const DAY_MS = 86_400_000;
/** A day and a half: from a day's start, always inside the next day (days last 23 to 25 h). */
const NEXT_DAY_PROBE_MS = 36 * 3_600_000;
/**
 * Where the instant of a local midnight can be, around the same reading in UTC: UTC
 * offsets run from -12 h to +14 h, and an hour more of margin keeps the bounds outside.
 */
const SEARCH_BEFORE_MS = 15 * 3_600_000;
const SEARCH_AFTER_MS = 13 * 3_600_000;

export class RotationSchedule {
  private readonly zone: PathFormatter;
  /** The local day of the last next(): [dayStart, dayEnd). */
  private dayStart = Number.NaN;
  private dayEnd = Number.NaN;

  /** Throws PathFormatError for a timezone Intl does not know. */
  constructor(
    readonly intervalMs: number,
    readonly timezone: string,
  ) {
    if (!(intervalMs > 0))
      throw new RangeError(`rotation interval must be positive: ${intervalMs}`);
    this.zone = new PathFormatter('', timezone, 'en');
  }

  /** The first scheduled rotation after `now` (strictly later). */
  next(now: number): number {
    // The cache holds one whole local day, so the answer never depends on the calls
    // before; it spares the Intl calls (some 80 µs) of every group opened that day.
    if (!(now >= this.dayStart && now < this.dayEnd)) {
      this.dayStart = this.startOfDay(now);
      this.dayEnd = this.startOfDay(this.dayStart + NEXT_DAY_PROBE_MS);
    }
    const start = this.dayStart;
    const step = (Math.floor((now - start) / this.intervalMs) + 1) * this.intervalMs;
    return start + Math.min(this.dayEnd - start, step);
  }

  /** The first instant whose local date is that of `t` (local midnight, or later where clocks skipped it). */
  startOfDay(t: number): number {
    const midnight = Math.floor(this.wallClock(t) / DAY_MS) * DAY_MS;
    // Midnight's instant under the offset in force at midnight, which differs from t's
    // when the clocks changed since: one correction finds it.
    const guess = midnight - this.zone.offsetMs(t);
    const start = midnight - this.zone.offsetMs(guess);
    if (this.wallClock(start) === midnight) return start;
    // The clocks jumped over midnight (zones that change at 00:00): the day starts at
    // the jump, the first instant reading midnight or later.
    let lo = midnight - SEARCH_BEFORE_MS;
    let hi = midnight + SEARCH_AFTER_MS;
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (this.wallClock(mid) >= midnight) hi = mid;
      else lo = mid;
    }
    return hi;
  }

  /** The local wall-clock reading of an instant, as milliseconds of a UTC date. */
  private wallClock(t: number): number {
    return t + this.zone.offsetMs(t);
  }
}

/**
 * The sparse time index of one segment: `<base offset>.timeindex`.
 *
 * Format: 12-byte entries, big-endian, no header and no checksum:
 *   timestamp i64 (ms) | relative offset u32
 * An entry (T, O) says "the largest timestamp among the records up to offset O is
 * T, and O holds it" (Kafka's maxTimestampSoFar / offsetOfMaxTimestampSoFar). So
 * when T < target, no record at or before O qualifies, and the search for the
 * earliest offset with a timestamp >= target may start at the batch holding O: the
 * lookup takes the last entry with T < target, then scans batches. Entries are added
 * with the offset index entries (every `index.interval.bytes`) when the max
 * timestamp grew, and once more when the segment stops being active, so the last
 * entry holds the segment's largest timestamp (time retention reads it without
 * reading the log).
 *
 * Invariants: timestamps and relative offsets strictly increase. Derived data like
 * the offset index: kept in memory, written on flush/roll/close, sanity-checked on
 * load, rebuilt from the log when missing or insane.
 *
 * Concurrency: used only by its segment, on the broker thread.
 */
import { readInt64, writeInt64 } from '../../protocol/record-batch.ts';
import { CorruptIndexError } from './errors.ts';
import { IndexFile } from './index-file.ts';

export const TIME_INDEX_ENTRY_BYTES = 12;

export interface TimestampOffset {
  timestamp: number;
  offset: number;
}

export class TimeIndex extends IndexFile {
  constructor(path: string, baseOffset: number, maxIndexBytes: number) {
    super(path, baseOffset, maxIndexBytes, TIME_INDEX_ENTRY_BYTES);
  }

  entry(i: number): TimestampOffset {
    const p = i * TIME_INDEX_ENTRY_BYTES;
    return {
      timestamp: readInt64(this.buf, p),
      offset: this.baseOffset + this.buf.readUInt32BE(p + 8),
    };
  }

  lastEntry(): TimestampOffset | undefined {
    return this.count === 0 ? undefined : this.entry(this.count - 1);
  }

  /** Adds an entry when both the timestamp and the offset grew; otherwise ignores it. */
  maybeAppend(timestamp: number, offset: number): void {
    if (this.isFull()) return;
    const rel = offset - this.baseOffset;
    if (this.count > 0) {
      const last = (this.count - 1) * TIME_INDEX_ENTRY_BYTES;
      if (timestamp <= readInt64(this.buf, last) || rel < this.buf.readUInt32BE(last + 8)) return;
      if (rel === this.buf.readUInt32BE(last + 8)) {
        // Same offset, larger timestamp: the final entry of a segment replaces the last one.
        writeInt64(this.buf, last, timestamp);
        if (this.persisted === this.count) this.persisted--;
        return;
      }
    }
    const p = this.nextSlot();
    writeInt64(this.buf, p, timestamp);
    this.buf.writeUInt32BE(rel, p + 8);
    this.count++;
  }

  /** The last entry with timestamp < target, or undefined: scanning starts there. */
  lookupBefore(target: number): TimestampOffset | undefined {
    let lo = 0;
    let hi = this.count - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (readInt64(this.buf, mid * TIME_INDEX_ENTRY_BYTES) < target) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found < 0 ? undefined : this.entry(found);
  }

  /** Drops entries at or after `offset`. */
  truncateToOffset(offset: number): void {
    let n = this.count;
    while (n > 0 && this.entry(n - 1).offset >= offset) n--;
    this.truncateEntries(n);
  }

  /** Loads and sanity-checks the file; throws CorruptIndexError when missing or insane. */
  load(nextOffset: number): void {
    this.loadEntries((data, n) => {
      let lastTs = Number.NEGATIVE_INFINITY;
      let lastRel = -1;
      for (let i = 0; i < n; i++) {
        const ts = readInt64(data, i * TIME_INDEX_ENTRY_BYTES);
        const rel = data.readUInt32BE(i * TIME_INDEX_ENTRY_BYTES + 8);
        if (
          ts <= lastTs ||
          rel < lastRel ||
          this.baseOffset + rel >= Math.max(nextOffset, this.baseOffset + 1)
        ) {
          throw new CorruptIndexError(this.path, `entry ${i} (${ts}, ${rel}) breaks the ordering`);
        }
        lastTs = ts;
        lastRel = rel;
      }
    });
  }
}

/**
 * The sparse offset index of one segment: `<base offset>.index`.
 *
 * Format: 8-byte entries, big-endian, no header and no checksum:
 *   relative offset u32 (offset - segment base offset) | file position u32
 * An entry says "the batch containing this offset starts at this byte of the .log",
 * and one is added every `index.interval.bytes` of log, so a lookup is a binary
 * search for the last entry at or below the target followed by a short scan of at
 * most that many bytes of batch headers.
 *
 * Invariants: relative offsets and positions strictly increase; every position is
 * below the segment's size. The index is derived data: it is not synced on every
 * append and carries no checksum, because recovery rebuilds it from the log after a
 * crash and a sanity check (this module's `load`) rejects one that breaks the
 * invariants. Readers also fall back to a scan from position 0 if an entry does not
 * land on a batch, so a corrupt index slows reads down but never breaks them.
 *
 * Entries live in memory (up to `segment.index.bytes`, 10 MiB by default) and are
 * written to the file on flush, roll and close: appending to the index costs no
 * system call on the produce path.
 *
 * Concurrency: used only by its segment, on the broker thread.
 */
import { CorruptIndexError } from './errors.ts';
import { IndexFile } from './index-file.ts';

export const OFFSET_INDEX_ENTRY_BYTES = 8;

export interface OffsetPosition {
  offset: number;
  position: number;
}

export class OffsetIndex extends IndexFile {
  constructor(path: string, baseOffset: number, maxIndexBytes: number) {
    super(path, baseOffset, maxIndexBytes, OFFSET_INDEX_ENTRY_BYTES);
  }

  entry(i: number): OffsetPosition {
    const p = i * OFFSET_INDEX_ENTRY_BYTES;
    return {
      offset: this.baseOffset + this.buf.readUInt32BE(p),
      position: this.buf.readUInt32BE(p + 4),
    };
  }

  lastEntry(): OffsetPosition {
    return this.count === 0 ? { offset: this.baseOffset, position: 0 } : this.entry(this.count - 1);
  }

  /** Adds an entry if it keeps both columns increasing; otherwise ignores it. */
  append(offset: number, position: number): void {
    if (this.isFull()) return;
    const rel = offset - this.baseOffset;
    if (this.count > 0) {
      const last = (this.count - 1) * OFFSET_INDEX_ENTRY_BYTES;
      if (rel <= this.buf.readUInt32BE(last) || position <= this.buf.readUInt32BE(last + 4)) return;
    }
    const p = this.nextSlot();
    this.buf.writeUInt32BE(rel, p);
    this.buf.writeUInt32BE(position, p + 4);
    this.count++;
  }

  /** The last entry whose offset is <= target, or (base, 0) when there is none. */
  lookup(target: number): OffsetPosition {
    const rel = target - this.baseOffset;
    let lo = 0;
    let hi = this.count - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.buf.readUInt32BE(mid * OFFSET_INDEX_ENTRY_BYTES) <= rel) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found < 0 ? { offset: this.baseOffset, position: 0 } : this.entry(found);
  }

  /** Drops entries at or after `position` (the log is being truncated there). */
  truncateToPosition(position: number): void {
    let n = this.count;
    while (n > 0 && this.entry(n - 1).position >= position) n--;
    this.truncateEntries(n);
  }

  /**
   * Loads the index file and checks its invariants against the segment's size.
   * Throws CorruptIndexError when the file is missing or fails the check.
   */
  load(logSize: number): void {
    this.loadEntries((data, n) => {
      let lastRel = -1;
      let lastPos = -1;
      for (let i = 0; i < n; i++) {
        const rel = data.readUInt32BE(i * OFFSET_INDEX_ENTRY_BYTES);
        const pos = data.readUInt32BE(i * OFFSET_INDEX_ENTRY_BYTES + 4);
        if (rel <= lastRel || pos <= lastPos || pos >= logSize) {
          throw new CorruptIndexError(this.path, `entry ${i} (${rel}, ${pos}) breaks the ordering`);
        }
        lastRel = rel;
        lastPos = pos;
      }
    });
  }
}

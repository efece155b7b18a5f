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
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import { readInt64, writeInt64 } from '../../protocol/record-batch.ts';
import { CorruptIndexError } from './errors.ts';

export const TIME_INDEX_ENTRY_BYTES = 12;

export interface TimestampOffset {
  timestamp: number;
  offset: number;
}

export class TimeIndex {
  private buf: Buffer;
  private count = 0;
  private persisted = 0;
  readonly maxEntries: number;

  constructor(
    readonly path: string,
    readonly baseOffset: number,
    maxIndexBytes: number,
  ) {
    this.maxEntries = Math.max(1, Math.floor(maxIndexBytes / TIME_INDEX_ENTRY_BYTES));
    this.buf = Buffer.alloc(Math.min(this.maxEntries, 1024) * TIME_INDEX_ENTRY_BYTES);
  }

  get entries(): number {
    return this.count;
  }

  isFull(): boolean {
    return this.count >= this.maxEntries;
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
    const p = this.count * TIME_INDEX_ENTRY_BYTES;
    if (p + TIME_INDEX_ENTRY_BYTES > this.buf.length) this.grow();
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
    while (this.count > 0 && this.entry(this.count - 1).offset >= offset) this.count--;
    if (this.persisted > this.count) this.persisted = -1;
  }

  clear(): void {
    this.count = 0;
    this.persisted = -1;
  }

  writeToFile(sync: boolean): void {
    if (this.persisted === this.count && existsSync(this.path)) return;
    const rewrite = this.persisted < 0 || !existsSync(this.path);
    const fd = openSync(this.path, rewrite ? 'w' : 'r+');
    try {
      const from = rewrite ? 0 : this.persisted;
      const start = from * TIME_INDEX_ENTRY_BYTES;
      writeSync(fd, this.buf, start, this.count * TIME_INDEX_ENTRY_BYTES - start, start);
      if (sync) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    this.persisted = this.count;
  }

  /** Loads and sanity-checks the file; throws CorruptIndexError when missing or insane. */
  load(nextOffset: number): void {
    if (!existsSync(this.path)) throw new CorruptIndexError(this.path, 'missing');
    const data = readFileSync(this.path);
    if (data.length % TIME_INDEX_ENTRY_BYTES !== 0) {
      throw new CorruptIndexError(this.path, `size ${data.length} is not a multiple of 12`);
    }
    const n = data.length / TIME_INDEX_ENTRY_BYTES;
    if (n > this.maxEntries)
      throw new CorruptIndexError(this.path, `${n} entries exceed the maximum`);
    let lastTs = Number.NEGATIVE_INFINITY;
    let lastRel = -1;
    for (let i = 0; i < n; i++) {
      const ts = readInt64(data, i * 12);
      const rel = data.readUInt32BE(i * 12 + 8);
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
    this.buf = Buffer.alloc(Math.max(data.length, 1024 * TIME_INDEX_ENTRY_BYTES));
    data.copy(this.buf);
    this.count = n;
    this.persisted = n;
  }

  private grow(): void {
    const bigger = Buffer.alloc(
      Math.min(this.maxEntries * TIME_INDEX_ENTRY_BYTES, this.buf.length * 2),
    );
    this.buf.copy(bigger);
    this.buf = bigger;
  }
}

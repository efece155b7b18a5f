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
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import { CorruptIndexError } from './errors.ts';

export const OFFSET_INDEX_ENTRY_BYTES = 8;

export interface OffsetPosition {
  offset: number;
  position: number;
}

export class OffsetIndex {
  private buf: Buffer;
  private count = 0;
  private persisted = 0;
  readonly maxEntries: number;

  constructor(
    readonly path: string,
    readonly baseOffset: number,
    maxIndexBytes: number,
  ) {
    this.maxEntries = Math.max(1, Math.floor(maxIndexBytes / OFFSET_INDEX_ENTRY_BYTES));
    this.buf = Buffer.alloc(Math.min(this.maxEntries, 1024) * OFFSET_INDEX_ENTRY_BYTES);
  }

  get entries(): number {
    return this.count;
  }

  isFull(): boolean {
    return this.count >= this.maxEntries;
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
    const p = this.count * OFFSET_INDEX_ENTRY_BYTES;
    if (p + OFFSET_INDEX_ENTRY_BYTES > this.buf.length) this.grow();
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
    while (this.count > 0 && this.entry(this.count - 1).position >= position) this.count--;
    if (this.persisted > this.count) this.persisted = -1; // forces a full rewrite
  }

  clear(): void {
    this.count = 0;
    this.persisted = -1;
  }

  /** Writes entries not yet on disk; rewrites the file when entries were removed. */
  writeToFile(sync: boolean): void {
    if (this.persisted === this.count && existsSync(this.path)) return;
    const rewrite = this.persisted < 0 || !existsSync(this.path);
    const fd = openSync(this.path, rewrite ? 'w' : 'r+');
    try {
      const from = rewrite ? 0 : this.persisted;
      const start = from * OFFSET_INDEX_ENTRY_BYTES;
      writeSync(fd, this.buf, start, this.count * OFFSET_INDEX_ENTRY_BYTES - start, start);
      if (sync) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    this.persisted = this.count;
  }

  /**
   * Loads the index file and checks its invariants against the segment's size.
   * Throws CorruptIndexError when the file is missing or fails the check.
   */
  load(logSize: number): void {
    if (!existsSync(this.path)) throw new CorruptIndexError(this.path, 'missing');
    const data = readFileSync(this.path);
    if (data.length % OFFSET_INDEX_ENTRY_BYTES !== 0) {
      throw new CorruptIndexError(this.path, `size ${data.length} is not a multiple of 8`);
    }
    const n = data.length / OFFSET_INDEX_ENTRY_BYTES;
    if (n > this.maxEntries)
      throw new CorruptIndexError(this.path, `${n} entries exceed the maximum`);
    let lastRel = -1;
    let lastPos = -1;
    for (let i = 0; i < n; i++) {
      const rel = data.readUInt32BE(i * 8);
      const pos = data.readUInt32BE(i * 8 + 4);
      if (rel <= lastRel || pos <= lastPos || pos >= logSize) {
        throw new CorruptIndexError(this.path, `entry ${i} (${rel}, ${pos}) breaks the ordering`);
      }
      lastRel = rel;
      lastPos = pos;
    }
    this.buf = Buffer.alloc(Math.max(data.length, 1024 * OFFSET_INDEX_ENTRY_BYTES));
    data.copy(this.buf);
    this.count = n;
    this.persisted = n;
  }

  private grow(): void {
    const bigger = Buffer.alloc(
      Math.min(this.maxEntries * OFFSET_INDEX_ENTRY_BYTES, this.buf.length * 2),
    );
    this.buf.copy(bigger);
    this.buf = bigger;
  }
}

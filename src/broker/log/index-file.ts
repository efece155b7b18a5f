/**
 * What the offset and time indexes share (Kafka's AbstractIndex): fixed-size entries
 * kept in a growable in-memory buffer, capped at `segment.index.bytes`, written to
 * their file on flush, roll and close (only the entries added since the last write,
 * or the whole file after a truncation), and loaded back with a size check before
 * the subclass checks its own ordering invariants.
 *
 * Concurrency: used only by its segment, on the broker thread.
 */
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import { CorruptIndexError } from './errors.ts';

/** Entries allocated up front; the buffer doubles from there up to maxEntries. */
const INITIAL_ENTRIES = 1024;

export abstract class IndexFile {
  protected buf: Buffer;
  protected count = 0;
  /** Entries already in the file; -1 forces a full rewrite. */
  protected persisted = 0;
  readonly maxEntries: number;

  constructor(
    readonly path: string,
    readonly baseOffset: number,
    maxIndexBytes: number,
    protected readonly entryBytes: number,
  ) {
    this.maxEntries = Math.max(1, Math.floor(maxIndexBytes / entryBytes));
    this.buf = Buffer.alloc(Math.min(this.maxEntries, INITIAL_ENTRIES) * entryBytes);
  }

  get entries(): number {
    return this.count;
  }

  isFull(): boolean {
    return this.count >= this.maxEntries;
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
      const start = (rewrite ? 0 : this.persisted) * this.entryBytes;
      writeSync(fd, this.buf, start, this.count * this.entryBytes - start, start);
      if (sync) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    this.persisted = this.count;
  }

  /** Keeps the first `n` entries (the log is being truncated). */
  protected truncateEntries(n: number): void {
    this.count = n;
    if (this.persisted > this.count) this.persisted = -1;
  }

  /** The byte position of the next entry, growing the buffer when it is full. */
  protected nextSlot(): number {
    const p = this.count * this.entryBytes;
    if (p + this.entryBytes > this.buf.length) {
      const bigger = Buffer.alloc(Math.min(this.maxEntries * this.entryBytes, this.buf.length * 2));
      this.buf.copy(bigger);
      this.buf = bigger;
    }
    return p;
  }

  /**
   * Reads the file and checks its size; `check` validates the entries (throwing
   * CorruptIndexError) before they replace the in-memory ones.
   */
  protected loadEntries(check: (data: Buffer, entries: number) => void): void {
    if (!existsSync(this.path)) throw new CorruptIndexError(this.path, 'missing');
    const data = readFileSync(this.path);
    if (data.length % this.entryBytes !== 0) {
      throw new CorruptIndexError(
        this.path,
        `size ${data.length} is not a multiple of ${this.entryBytes}`,
      );
    }
    const n = data.length / this.entryBytes;
    if (n > this.maxEntries)
      throw new CorruptIndexError(this.path, `${n} entries exceed the maximum`);
    check(data, n);
    this.buf = Buffer.alloc(Math.max(data.length, INITIAL_ENTRIES * this.entryBytes));
    data.copy(this.buf);
    this.count = n;
    this.persisted = n;
  }
}

/**
 * The aborted-transaction index of one segment: `<20-digit base offset>.txnindex`,
 * Kafka's format. One entry per transaction whose ABORT marker lies in this segment,
 * in marker order, 34 bytes each, big-endian:
 *
 *   version i16 (0) · producerId i64 · firstOffset i64 · lastOffset i64 · lastStableOffset i64
 *
 * firstOffset is the transaction's first record in this partition (possibly in an
 * earlier segment), lastOffset its ABORT marker, lastStableOffset the partition's LSO
 * once the marker was written. A read_committed Fetch gets every entry whose range
 * overlaps the records it is answered, and the consumer drops those records.
 *
 * Invariants: entries are in increasing lastOffset; the file holds whole entries.
 * No checksum: the index is derived from the log. A file that is not a whole number
 * of entries, or whose entries are out of order or out of the segment, is corrupt:
 * it is emptied and `lost` is set, and the partition's producer state is then
 * rebuilt from the log start (producer-state-store.ts), which re-adds every entry.
 * Appends are idempotent (an entry at or below the last lastOffset is ignored), so
 * replaying the log over an index that survived changes nothing.
 *
 * Compaction: once no record of an aborted transaction is left, the cleaner drops its
 * entry (Kafka's cleaned-segment index): a cleaned segment's index is written as
 * `<base>.txnindex.swap` and swapped in with its log (cleaner.ts), or replaced
 * atomically (`replace`) when the log bytes stay. An entry must never outlive its
 * ABORT marker: a reader would then drop the producer's next committed transaction.
 *
 * Durability: an entry is written and fsynced when its marker is appended. Aborts
 * are rare, and an entry lost in a crash would let read_committed readers see
 * aborted records; after a crash, recovery truncates entries beyond the log end.
 *
 * Single-threaded, on the broker thread, like the segment that owns it.
 */
import {
  closeSync,
  existsSync,
  fsyncSync,
  openSync,
  readFileSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { readInt64, writeInt64 } from '../../protocol/record-batch.ts';
import { writeFileAtomic } from './atomic-file.ts';

export const TXN_INDEX_ENTRY_BYTES = 34;

export interface AbortedTxn {
  producerId: number;
  firstOffset: number;
  lastOffset: number;
  lastStableOffset: number;
}

export class TransactionIndex {
  private entries: AbortedTxn[] = [];
  /** The file was corrupt and was emptied: its entries must be rebuilt from the log. */
  lost = false;

  constructor(
    readonly path: string,
    private readonly baseOffset: number,
  ) {}

  /** Reads the file, if any; a corrupt one is emptied and marked lost. */
  load(): void {
    this.entries = [];
    if (!existsSync(this.path)) return;
    const buf = readFileSync(this.path);
    const why = this.parse(buf);
    if (why !== undefined) {
      this.entries = [];
      this.lost = true;
      writeFileSync(this.path, Buffer.alloc(0));
    }
  }

  private parse(buf: Buffer): string | undefined {
    if (buf.length % TXN_INDEX_ENTRY_BYTES !== 0) return `${buf.length} bytes is not whole entries`;
    let last = -1;
    for (let pos = 0; pos < buf.length; pos += TXN_INDEX_ENTRY_BYTES) {
      if (buf.readInt16BE(pos) !== 0) return `entry version ${buf.readInt16BE(pos)}`;
      const entry = {
        producerId: readInt64(buf, pos + 2),
        firstOffset: readInt64(buf, pos + 10),
        lastOffset: readInt64(buf, pos + 18),
        lastStableOffset: readInt64(buf, pos + 26),
      };
      if (
        entry.lastOffset < this.baseOffset ||
        entry.lastOffset <= last ||
        entry.firstOffset > entry.lastOffset
      ) {
        return `entry ending at ${entry.lastOffset} is out of order`;
      }
      last = entry.lastOffset;
      this.entries.push(entry);
    }
    return undefined;
  }

  get all(): readonly AbortedTxn[] {
    return this.entries;
  }

  get lastOffset(): number {
    return this.entries.at(-1)?.lastOffset ?? -1;
  }

  /** The file content holding `entries`, in order (a cleaner's replacement index). */
  static encode(entries: readonly AbortedTxn[]): Buffer {
    const buf = Buffer.alloc(entries.length * TXN_INDEX_ENTRY_BYTES);
    entries.forEach((e, i) => {
      const pos = i * TXN_INDEX_ENTRY_BYTES;
      buf.writeInt16BE(0, pos);
      writeInt64(buf, pos + 2, e.producerId);
      writeInt64(buf, pos + 10, e.firstOffset);
      writeInt64(buf, pos + 18, e.lastOffset);
      writeInt64(buf, pos + 26, e.lastStableOffset);
    });
    return buf;
  }

  /** Adds an entry (ignored when the index already covers its marker) and makes it durable. */
  append(entry: AbortedTxn): void {
    if (entry.lastOffset <= this.lastOffset) return;
    const buf = TransactionIndex.encode([entry]);
    const fd = openSync(this.path, 'a');
    try {
      writeSync(fd, buf);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    this.entries.push({ ...entry });
  }

  /**
   * Entries whose transaction overlaps [from, upTo): their records may be in that range.
   * Entries are in lastOffset order, so the look starts at the first one ending at or
   * after `from`: a read_committed Fetch near the log end, every consumer's usual
   * place, does not walk the segment's older entries each time.
   */
  overlapping(from: number, upTo: number): AbortedTxn[] {
    const entries = this.entries;
    let lo = 0;
    let hi = entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (entries[mid]!.lastOffset < from) lo = mid + 1;
      else hi = mid;
    }
    const out: AbortedTxn[] = [];
    for (let i = lo; i < entries.length; i++) {
      if (entries[i]!.firstOffset < upTo) out.push(entries[i]!);
    }
    return out;
  }

  /** Drops entries whose marker is at or beyond `offset` (recovery cut the log there). */
  truncateTo(offset: number): void {
    const kept = this.entries.filter((e) => e.lastOffset < offset);
    if (kept.length === this.entries.length) return;
    this.rewrite(kept);
  }

  /** Replaces the entries (a cleaned segment takes over those of the segments it replaces). */
  rewrite(entries: readonly AbortedTxn[]): void {
    this.entries = [];
    if (existsSync(this.path)) unlinkSync(this.path);
    for (const e of entries) this.append(e);
  }

  /**
   * Replaces the entries in one atomic step (temp file, fsync, rename): the cleaner
   * drops entries whose records are all gone, and a crash must never leave fewer
   * entries than the log still needs.
   */
  replace(entries: readonly AbortedTxn[]): void {
    writeFileAtomic(this.path, TransactionIndex.encode(entries));
    this.entries = entries.map((e) => ({ ...e }));
  }

  clear(): void {
    this.entries = [];
    if (existsSync(this.path)) unlinkSync(this.path);
  }

  delete(): void {
    this.clear();
  }
}

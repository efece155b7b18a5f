/**
 * OffsetStorageWriter: a connector's source offsets on their way to the backing store,
 * as in Kafka Connect. The task runner records the latest committable offset per source
 * partition with `offset()`; a flush snapshots them (`beginFlush`), writes the snapshot
 * (`doFlush`), and on failure puts it back under newer offsets (`cancelFlush`), so an
 * offset is never lost by a failed write nor overwritten by an older one.
 *
 * One flush at a time: beginFlush while a flush is in progress is a programming error
 * (the task runner serialises commits). Called only from the task runner's loop.
 */
import type { SourceOffset, SourcePartition } from '../api/connect-record.ts';
import type { OffsetBackingStore } from '../storage/offset-backing-store.ts';
import { offsetKey, offsetValue } from './offset-keys.ts';

interface Entry {
  partition: SourcePartition;
  offset: SourceOffset | null;
}

export class OffsetStorageWriter {
  private data = new Map<string, Entry>();
  private toFlush: Map<string, Entry> | null = null;

  constructor(
    private readonly connector: string,
    private readonly store: OffsetBackingStore,
  ) {}

  /** Remember the latest offset of a partition (null: reset it) until the next flush. */
  offset(partition: SourcePartition, offset: SourceOffset | null): void {
    this.data.set(offsetKey(this.connector, partition), { partition, offset });
  }

  get flushing(): boolean {
    return this.toFlush !== null;
  }

  /** Snapshot the offsets to write; false when there is nothing to flush. */
  beginFlush(): boolean {
    if (this.toFlush !== null)
      throw new Error('OffsetStorageWriter: a flush is already in progress');
    if (this.data.size === 0) return false;
    this.toFlush = this.data;
    this.data = new Map();
    return true;
  }

  /** Write the snapshot; resolves when durable. Follow with cancelFlush on rejection. */
  async doFlush(): Promise<void> {
    const snapshot = this.toFlush;
    if (snapshot === null) throw new Error('OffsetStorageWriter: doFlush without beginFlush');
    const entries = new Map<string, string | null>();
    for (const [key, entry] of snapshot) {
      entries.set(key, entry.offset === null ? null : offsetValue(entry.offset));
    }
    await this.store.set(entries);
    this.toFlush = null;
  }

  /** Put a failed snapshot back; offsets recorded since the snapshot win. */
  cancelFlush(): void {
    if (this.toFlush === null) return;
    for (const [key, entry] of this.toFlush) if (!this.data.has(key)) this.data.set(key, entry);
    this.toFlush = null;
  }
}

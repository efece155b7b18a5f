/**
 * The cleaner's map from record key to the offset of its latest record in the dirty
 * part of the log (Kafka's OffsetMap / SkimpyOffsetMap).
 *
 * Kafka stores 16-byte MD5 digests in a fixed buffer so the cleaner's memory is
 * bounded whatever the keys. This map keeps exact keys (as latin1 strings, one char
 * per byte, so distinct keys never collide) in a JS Map, bounded by entry count
 * instead: the connect internal topics and CDC tables this broker compacts have
 * moderate key counts, and an exact map never drops a record because of a hash
 * collision. When it is full the cleaner stops its dirty range at the last batch it
 * fully mapped and cleans the rest next time, exactly as Kafka does.
 */

export class OffsetMap {
  private readonly map = new Map<string, number>();

  constructor(readonly maxEntries: number) {}

  get size(): number {
    return this.map.size;
  }

  /** False when the key is new and the map is full. */
  hasRoomFor(key: Buffer): boolean {
    return this.map.size < this.maxEntries || this.map.has(key.toString('latin1'));
  }

  put(key: Buffer, offset: number): void {
    this.map.set(key.toString('latin1'), offset);
  }

  /** Offset of the latest record with this key, or -1 when the dirty range never had it. */
  get(key: Buffer): number {
    return this.map.get(key.toString('latin1')) ?? -1;
  }

  clear(): void {
    this.map.clear();
  }
}

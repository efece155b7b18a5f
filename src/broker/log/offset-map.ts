/**
 * The cleaner's map from record key to the offset of its latest record in the dirty
 * part of the log (Kafka's OffsetMap / SkimpyOffsetMap).
 *
 * As in Kafka, keys are not kept: each is reduced to a 16-byte digest (the first half
 * of its SHA-256; Kafka uses MD5) in an open-addressing table of typed arrays, so the
 * cleaner's memory is 24 bytes per entry whatever the keys, outside the JS heap and
 * with no object per key. A table of a million CDC keys, each a JSON document with its
 * inline schema, takes 24 MB here where a Map of the keys themselves took about ten
 * times that. Two distinct keys would have to share 128 bits of SHA-256 for a record to
 * be dropped wrongly, which is as unlikely as it is for Kafka.
 *
 * The table starts small, doubles as it fills (to a load of at most 0.75), and shrinks
 * back when cleared, so memory is only held while a cleaning runs. When `maxEntries`
 * keys are mapped the cleaner stops its dirty range at the last batch it fully
 * mapped and cleans the rest next time, exactly as Kafka does.
 */
import { hash } from 'node:crypto';

const INITIAL_SLOTS = 1024;
const MAX_LOAD = 0.75;
const EMPTY = -1;

export class OffsetMap {
  /** Four 32-bit words of digest per slot. */
  private digests = new Uint32Array(INITIAL_SLOTS * 4);
  /** The offset per slot, EMPTY when the slot is free. */
  private offsets = new Float64Array(INITIAL_SLOTS).fill(EMPTY);
  private entries = 0;
  private readonly scratch = new Uint32Array(4);

  constructor(readonly maxEntries: number) {}

  get size(): number {
    return this.entries;
  }

  /** Whether `count` more keys fit even if all are new. */
  hasRoomFor(count: number): boolean {
    return this.entries + count <= this.maxEntries;
  }

  /** Maps `key` to `offset`; true when the key was not in the map before. */
  put(key: Buffer, offset: number): boolean {
    this.digest(key);
    let slot = this.find();
    const added = this.offsets[slot] === EMPTY;
    if (added) {
      if (this.entries + 1 > this.offsets.length * MAX_LOAD) {
        this.grow();
        slot = this.find();
      }
      this.entries++;
      const at = slot * 4;
      this.digests[at] = this.scratch[0]!;
      this.digests[at + 1] = this.scratch[1]!;
      this.digests[at + 2] = this.scratch[2]!;
      this.digests[at + 3] = this.scratch[3]!;
    }
    this.offsets[slot] = offset;
    return added;
  }

  /** Offset of the latest record with this key, or -1 when the dirty range never had it. */
  get(key: Buffer): number {
    this.digest(key);
    return this.offsets[this.find()]!;
  }

  /** Empties the map and gives its memory back (the next cleaning grows it again). */
  clear(): void {
    this.digests = new Uint32Array(INITIAL_SLOTS * 4);
    this.offsets = new Float64Array(INITIAL_SLOTS).fill(EMPTY);
    this.entries = 0;
  }

  private digest(key: Buffer): void {
    const d = hash('sha256', key, 'buffer') as Buffer;
    const s = this.scratch;
    s[0] = d.readUInt32LE(0);
    s[1] = d.readUInt32LE(4);
    s[2] = d.readUInt32LE(8);
    s[3] = d.readUInt32LE(12);
  }

  /** The slot holding the scratch digest, or the empty slot where it would go. */
  private find(): number {
    const s = this.scratch;
    const slots = this.offsets.length;
    let slot = s[0]! % slots;
    for (;;) {
      if (this.offsets[slot] === EMPTY) return slot;
      const at = slot * 4;
      if (
        this.digests[at] === s[0] &&
        this.digests[at + 1] === s[1] &&
        this.digests[at + 2] === s[2] &&
        this.digests[at + 3] === s[3]
      ) {
        return slot;
      }
      slot = slot + 1 === slots ? 0 : slot + 1;
    }
  }

  private grow(): void {
    const oldDigests = this.digests;
    const oldOffsets = this.offsets;
    const slots = oldOffsets.length * 2;
    this.digests = new Uint32Array(slots * 4);
    this.offsets = new Float64Array(slots).fill(EMPTY);
    const s = this.scratch;
    const saved = [s[0]!, s[1]!, s[2]!, s[3]!];
    for (let i = 0; i < oldOffsets.length; i++) {
      if (oldOffsets[i] === EMPTY) continue;
      s[0] = oldDigests[i * 4]!;
      s[1] = oldDigests[i * 4 + 1]!;
      s[2] = oldDigests[i * 4 + 2]!;
      s[3] = oldDigests[i * 4 + 3]!;
      const slot = this.find();
      this.digests.set(s, slot * 4);
      this.offsets[slot] = oldOffsets[i]!;
    }
    s.set(saved);
  }
}

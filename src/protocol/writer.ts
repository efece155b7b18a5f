/**
 * A big-endian writer that grows its buffer, producing either one Buffer or a list
 * of chunks for a vectored socket write.
 *
 * Large raw runs (`records` fields of Fetch responses and Produce requests) are not
 * copied into the growing buffer: the bytes written so far are sealed as a chunk and
 * the caller's Buffer is appended as its own chunk, so `chunks()` hands the socket
 * the stored record bytes untouched. `finish()` concatenates when one Buffer is
 * needed. RAW_CHUNK_THRESHOLD balances one extra iovec against a memcpy: below a
 * few KiB copying is cheaper than another chunk.
 *
 * Not shared across threads; a Writer is used for one message and dropped.
 */

const RAW_CHUNK_THRESHOLD = 4096;

export class Writer {
  private buf: Buffer;
  // Node's Buffer#writeBigInt64BE is several times slower than DataView#setBigInt64,
  // which V8 inlines; int64 fields are on every Fetch and Produce partition.
  private view: DataView;
  private pos = 0;
  /** Start of the part of `buf` not yet sealed into `sealed`. */
  private mark = 0;
  private sealed: Buffer[] = [];
  private sealedLength = 0;
  /** Bytes of caller Buffers passed through as chunks rather than copied. */
  passedThrough = 0;

  constructor(initialSize = 256) {
    this.buf = Buffer.allocUnsafe(initialSize);
    this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.length);
  }

  /** Total bytes written so far. */
  get length(): number {
    return this.sealedLength + this.pos - this.mark;
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const live = this.pos - this.mark;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, live + n, 256));
    this.buf.copy(next, 0, this.mark, this.pos);
    this.buf = next;
    this.view = new DataView(next.buffer, next.byteOffset, next.length);
    this.mark = 0;
    this.pos = live;
  }

  bool(v: boolean): void {
    this.ensure(1);
    this.buf[this.pos++] = v ? 1 : 0;
  }

  int8(v: number): void {
    this.ensure(1);
    this.buf.writeInt8(v, this.pos);
    this.pos += 1;
  }

  int16(v: number): void {
    this.ensure(2);
    this.buf.writeInt16BE(v, this.pos);
    this.pos += 2;
  }

  uint16(v: number): void {
    this.ensure(2);
    this.buf.writeUInt16BE(v, this.pos);
    this.pos += 2;
  }

  int32(v: number): void {
    this.ensure(4);
    this.buf.writeInt32BE(v, this.pos);
    this.pos += 4;
  }

  uint32(v: number): void {
    this.ensure(4);
    this.buf.writeUInt32BE(v, this.pos);
    this.pos += 4;
  }

  int64(v: bigint): void {
    this.ensure(8);
    this.view.setBigInt64(this.pos, v);
    this.pos += 8;
  }

  float64(v: number): void {
    this.ensure(8);
    this.buf.writeDoubleBE(v, this.pos);
    this.pos += 8;
  }

  uvarint(v: number): void {
    this.ensure(5);
    let n = v >>> 0;
    while (n >= 0x80) {
      this.buf[this.pos++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    this.buf[this.pos++] = n;
  }

  varint(v: number): void {
    this.uvarint(((v << 1) ^ (v >> 31)) >>> 0);
  }

  varlong(v: bigint): void {
    let n = BigInt.asUintN(64, (v << 1n) ^ (v >> 63n));
    this.ensure(10);
    while (n >= 0x80n) {
      this.buf[this.pos++] = Number(n & 0x7fn) | 0x80;
      n >>= 7n;
    }
    this.buf[this.pos++] = Number(n);
  }

  uuid(v: string): void {
    const hex = v.replace(/-/g, '');
    if (hex.length !== 32) throw new RangeError(`invalid uuid ${v}`);
    this.ensure(16);
    this.buf.write(hex, this.pos, 16, 'hex');
    this.pos += 16;
  }

  /** Appends bytes; large runs become their own chunk instead of being copied. */
  raw(b: Buffer): void {
    if (b.length >= RAW_CHUNK_THRESHOLD) {
      if (this.pos > this.mark) {
        this.sealed.push(this.buf.subarray(this.mark, this.pos));
        this.sealedLength += this.pos - this.mark;
        this.mark = this.pos;
      }
      this.sealed.push(b);
      this.sealedLength += b.length;
      this.passedThrough += b.length;
      return;
    }
    this.ensure(b.length);
    b.copy(this.buf, this.pos);
    this.pos += b.length;
  }

  string(s: string): void {
    const n = Buffer.byteLength(s);
    this.int16(n);
    this.ensure(n);
    this.pos += this.buf.write(s, this.pos, n, 'utf8');
  }

  nullableString(s: string | null): void {
    if (s === null) this.int16(-1);
    else this.string(s);
  }

  compactString(s: string): void {
    const n = Buffer.byteLength(s);
    this.uvarint(n + 1);
    this.ensure(n);
    this.pos += this.buf.write(s, this.pos, n, 'utf8');
  }

  compactNullableString(s: string | null): void {
    if (s === null) this.uvarint(0);
    else this.compactString(s);
  }

  bytes(b: Buffer): void {
    this.int32(b.length);
    this.raw(b);
  }

  nullableBytes(b: Buffer | null): void {
    if (b === null) this.int32(-1);
    else this.bytes(b);
  }

  compactBytes(b: Buffer): void {
    this.uvarint(b.length + 1);
    this.raw(b);
  }

  compactNullableBytes(b: Buffer | null): void {
    if (b === null) this.uvarint(0);
    else this.compactBytes(b);
  }

  /** Array length: int32 (-1 null) or compact uvarint N+1 (0 null). */
  arrayLength(compact: boolean, n: number): void {
    if (compact) this.uvarint(n + 1);
    else this.int32(n);
  }

  /** Reserves 4 bytes for a length written later with `patchInt32`; returns their offset. */
  reserveInt32(): number {
    if (this.sealed.length > 0 || this.mark !== 0) {
      throw new Error('reserveInt32 must be called before any chunk is sealed');
    }
    this.ensure(4);
    const at = this.pos;
    this.pos += 4;
    return at;
  }

  patchInt32(at: number, v: number): void {
    // A reserved slot lies in the first sealed chunk once anything was sealed, since
    // reservation happens before sealing and sealing starts at offset 0.
    const target = this.sealed.length > 0 ? this.sealed[0] : this.buf;
    target.writeInt32BE(v, at);
  }

  /** The written bytes as chunks, in order, for a vectored write. */
  chunks(): Buffer[] {
    const out = this.sealed.slice();
    if (this.pos > this.mark) out.push(this.buf.subarray(this.mark, this.pos));
    return out;
  }

  /** The written bytes as one Buffer (concatenated only if chunks were sealed). */
  finish(): Buffer {
    if (this.sealed.length === 0) return this.buf.subarray(this.mark, this.pos);
    return Buffer.concat(this.chunks(), this.length);
  }
}

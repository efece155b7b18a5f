/**
 * A bounds-checked, big-endian reader over one Kafka frame, with a sticky error.
 *
 * Sticky error (as franz-go's kbin.Reader): the first read that would run past the
 * end, or that meets an invalid length or varint, sets `failure` and moves the
 * cursor to the end; every later read returns a zero value (0, 0n, false, '', null,
 * an empty Buffer). Decoding code therefore checks nothing per field and asks
 * `ok` once at the end. No read throws and no length read from the wire causes an
 * allocation larger than the bytes actually present: every length is checked
 * against the remaining input before anything is sliced or looped over.
 *
 * `bytes`/`records` reads return views (subarray) into the frame, never copies, so
 * decoded messages keep the frame alive: callers that retain bytes beyond the
 * request's life must copy them themselves.
 *
 * Used by the generic codec (codec.ts) and by anyone parsing Kafka-encoded bytes
 * (record batches, consumer protocol metadata). Not shared across threads.
 */
import { ZERO_UUID } from './sentinels.ts';

const EMPTY = Buffer.alloc(0);

export class Reader {
  private pos: number;
  private readonly end: number;
  // DataView#getBigInt64 is inlined by V8, unlike Buffer#readBigInt64BE.
  private readonly view: DataView;
  /** First problem met, or null while every read so far was valid. */
  failure: string | null = null;

  constructor(
    readonly buf: Buffer,
    start = 0,
    end = buf.length,
  ) {
    this.pos = start;
    this.end = end;
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.length);
  }

  get ok(): boolean {
    return this.failure === null;
  }

  get offset(): number {
    return this.pos;
  }

  get remaining(): number {
    return this.end - this.pos;
  }

  /** Marks the reader bad (first reason wins) and exhausts it. */
  fail(reason: string): void {
    if (this.failure === null) this.failure = `${reason} at byte ${this.pos}`;
    this.pos = this.end;
  }

  /** True if n more bytes are available; otherwise fails. */
  private need(n: number): boolean {
    if (this.pos + n <= this.end) return true;
    this.fail(`short read: need ${n} bytes, have ${this.end - this.pos}`);
    return false;
  }

  skip(n: number): void {
    if (n < 0) this.fail(`negative skip ${n}`);
    else if (this.need(n)) this.pos += n;
  }

  /** Moves the cursor to an absolute offset inside the frame (used after tagged fields). */
  seek(offset: number): void {
    if (offset < this.pos || offset > this.end) this.fail(`bad seek to ${offset}`);
    else this.pos = offset;
  }

  bool(): boolean {
    if (!this.need(1)) return false;
    return this.buf[this.pos++] !== 0;
  }

  int8(): number {
    if (!this.need(1)) return 0;
    return this.buf.readInt8(this.pos++);
  }

  int16(): number {
    if (!this.need(2)) return 0;
    const v = this.buf.readInt16BE(this.pos);
    this.pos += 2;
    return v;
  }

  uint16(): number {
    if (!this.need(2)) return 0;
    const v = this.buf.readUInt16BE(this.pos);
    this.pos += 2;
    return v;
  }

  int32(): number {
    if (!this.need(4)) return 0;
    const v = this.buf.readInt32BE(this.pos);
    this.pos += 4;
    return v;
  }

  uint32(): number {
    if (!this.need(4)) return 0;
    const v = this.buf.readUInt32BE(this.pos);
    this.pos += 4;
    return v;
  }

  int64(): bigint {
    if (!this.need(8)) return 0n;
    const v = this.view.getBigInt64(this.pos);
    this.pos += 8;
    return v;
  }

  float64(): number {
    if (!this.need(8)) return 0;
    const v = this.buf.readDoubleBE(this.pos);
    this.pos += 8;
    return v;
  }

  /** Unsigned LEB128 varint of at most 32 bits (5 bytes). */
  uvarint(): number {
    let result = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (!this.need(1)) return 0;
      const b = this.buf[this.pos++];
      // Multiplication rather than << keeps bits 28..31 positive.
      result += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) {
        if (result > 0xffffffff) break;
        return result;
      }
    }
    this.fail('invalid unsigned varint');
    return 0;
  }

  /** Zigzag-encoded signed varint (int32 range). */
  varint(): number {
    const u = this.uvarint();
    return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
  }

  /** Zigzag-encoded signed varlong (int64 range, 10 bytes at most). */
  varlong(): bigint {
    let result = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (!this.need(1)) return 0n;
      const b = this.buf[this.pos++];
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) {
        if (result > 0xffffffffffffffffn) break;
        return (result >> 1n) ^ -(result & 1n);
      }
    }
    this.fail('invalid varlong');
    return 0n;
  }

  uuid(): string {
    if (!this.need(16)) return ZERO_UUID;
    const h = this.buf.toString('hex', this.pos, this.pos + 16);
    this.pos += 16;
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }

  /** Reads n raw bytes as a view into the frame. */
  raw(n: number): Buffer {
    if (n < 0) {
      this.fail(`negative length ${n}`);
      return EMPTY;
    }
    if (!this.need(n)) return EMPTY;
    const v = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return v;
  }

  private utf8(n: number): string {
    if (!this.need(n)) return '';
    const s = this.buf.toString('utf8', this.pos, this.pos + n);
    this.pos += n;
    return s;
  }

  /** int16 length; -1 is invalid here. */
  string(): string {
    const n = this.int16();
    if (n < 0) {
      this.fail(`null or negative string length ${n}`);
      return '';
    }
    return this.utf8(n);
  }

  nullableString(): string | null {
    const n = this.int16();
    if (n === -1) return null;
    if (n < 0) {
      this.fail(`negative string length ${n}`);
      return null;
    }
    return this.utf8(n);
  }

  /** Unsigned varint of length + 1; 0 (null) is invalid here. */
  compactString(): string {
    const n = this.uvarint() - 1;
    if (n < 0) {
      this.fail('null compact string');
      return '';
    }
    return this.utf8(n);
  }

  compactNullableString(): string | null {
    const n = this.uvarint() - 1;
    if (n < 0) return null;
    return this.utf8(n);
  }

  bytes(): Buffer {
    const n = this.int32();
    if (n < 0) {
      this.fail(`null or negative bytes length ${n}`);
      return EMPTY;
    }
    return this.raw(n);
  }

  nullableBytes(): Buffer | null {
    const n = this.int32();
    if (n === -1) return null;
    return this.raw(n);
  }

  compactBytes(): Buffer {
    const n = this.uvarint() - 1;
    if (n < 0) {
      this.fail('null compact bytes');
      return EMPTY;
    }
    return this.raw(n);
  }

  compactNullableBytes(): Buffer | null {
    const n = this.uvarint() - 1;
    if (n < 0) return null;
    return this.raw(n);
  }

  /**
   * Reads an array length (int32, or compact uvarint N+1) and checks it against the
   * bytes left, given the smallest encoded size of one element, so a forged count
   * cannot make the decoder loop or allocate beyond the frame. Returns -1 for null.
   */
  arrayLength(compact: boolean, minElementSize: number): number {
    const n = compact ? this.uvarint() - 1 : this.int32();
    if (n === -1) return -1;
    if (n < 0) {
      this.fail(`negative array length ${n}`);
      return 0;
    }
    if (n * minElementSize > this.end - this.pos) {
      this.fail(`array length ${n} exceeds remaining ${this.end - this.pos} bytes`);
      return 0;
    }
    return n;
  }
}

/**
 * A writer for Thrift's compact protocol, the encoding of Parquet's page headers and
 * footer (flat-parquet-encoder.ts). Only what those structures use: i32, i64, bool,
 * binary, lists of structs / i32 / i64 / bool / binary, and nested structs.
 *
 * Field headers are written as a delta from the previous field id of the same struct
 * when it fits in 4 bits (ids ascending, as Parquet's structures are written here),
 * else as a full zigzag id. Integers are zigzag varints. i64 values are JS numbers:
 * every i64 Parquet stores here (offsets, sizes, row counts) is far below 2^53.
 */

/** Compact protocol type ids. */
export const TType = {
  True: 1,
  False: 2,
  I32: 5,
  I64: 6,
  Binary: 8,
  List: 9,
  Struct: 12,
} as const;
export type TType = (typeof TType)[keyof typeof TType];

const encoder = new TextEncoder();

export class ThriftWriter {
  private buf: Uint8Array;
  private pos = 0;
  /** Last field id written, per open struct (innermost last). */
  private readonly lastField: number[] = [0];

  constructor(capacity = 256) {
    this.buf = new Uint8Array(capacity);
  }

  get length(): number {
    return this.pos;
  }

  /** The bytes written so far (a view: valid until the next write). */
  bytes(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }

  reset(): void {
    this.pos = 0;
    this.lastField.length = 1;
    this.lastField[0] = 0;
  }

  i32(id: number, value: number): this {
    this.fieldHeader(id, TType.I32);
    return this.zigzag(value);
  }

  i64(id: number, value: number): this {
    this.fieldHeader(id, TType.I64);
    return this.zigzag(value);
  }

  bool(id: number, value: boolean): this {
    this.fieldHeader(id, value ? TType.True : TType.False);
    return this;
  }

  binary(id: number, value: Uint8Array): this {
    this.fieldHeader(id, TType.Binary);
    return this.rawBinary(value);
  }

  string(id: number, value: string): this {
    return this.binary(id, encoder.encode(value));
  }

  /** Opens a struct field; close it with end(). */
  struct(id: number): this {
    this.fieldHeader(id, TType.Struct);
    this.lastField.push(0);
    return this;
  }

  /** Opens a struct that is a list element; close it with end(). */
  element(): this {
    this.lastField.push(0);
    return this;
  }

  /** Closes the innermost struct (or the top-level one, which has no header). */
  end(): this {
    this.byte(0);
    if (this.lastField.length > 1) this.lastField.pop();
    return this;
  }

  /** A list field's header; the caller then writes `size` elements of `type`. */
  list(id: number, type: TType, size: number): this {
    this.fieldHeader(id, TType.List);
    if (size < 15) return this.byte((size << 4) | type);
    this.byte(0xf0 | type);
    return this.varint(size);
  }

  /** An i32 list element. */
  i32Element(value: number): this {
    return this.zigzag(value);
  }

  /** An i64 list element. */
  i64Element(value: number): this {
    return this.zigzag(value);
  }

  /** A bool list element (in a list of type TType.True): one byte, 1 or 2. */
  boolElement(value: boolean): this {
    return this.byte(value ? TType.True : TType.False);
  }

  /** A binary (or string) list element. */
  binaryElement(value: Uint8Array | string): this {
    return this.rawBinary(typeof value === 'string' ? encoder.encode(value) : value);
  }

  private fieldHeader(id: number, type: TType): void {
    const last = this.lastField.length - 1;
    const delta = id - (this.lastField[last] as number);
    if (delta > 0 && delta <= 15) this.byte((delta << 4) | type);
    else {
      this.byte(type);
      this.zigzag(id);
    }
    this.lastField[last] = id;
  }

  private rawBinary(value: Uint8Array): this {
    this.varint(value.length);
    this.ensure(value.length);
    this.buf.set(value, this.pos);
    this.pos += value.length;
    return this;
  }

  private zigzag(value: number): this {
    // (n << 1) ^ (n >> 63) for numbers up to 2^53, without 32-bit overflow.
    return this.varint(value >= 0 ? value * 2 : -value * 2 - 1);
  }

  private varint(value: number): this {
    this.ensure(10);
    let v = value;
    while (v >= 0x80) {
      this.buf[this.pos++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.pos++] = v;
    return this;
  }

  private byte(b: number): this {
    this.ensure(1);
    this.buf[this.pos++] = b;
    return this;
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.pos + n));
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
  }
}

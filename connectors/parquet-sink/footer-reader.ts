/**
 * Reads what recovery needs from a Parquet footer: the row count and the key-value
 * metadata, without a Parquet library (the writer does not read, and hyparquet is
 * only a dev dependency).
 *
 * File tail format: ... <FileMetaData, thrift compact> <footer length, u32 LE> "PAR1".
 * FileMetaData fields used: 3 num_rows (i64), 5 key_value_metadata
 * (list<struct{1: key string, 2: value string}>); every other field is skipped by
 * type, so footers written by any Parquet writer parse.
 *
 * A store reads the last FOOTER_TAIL_GUESS bytes first; a footer larger than that
 * needs a second ranged read of exactly footerLength + 8 bytes.
 */

export const FOOTER_TAIL_GUESS = 64 * 1024;

export interface FooterInfo {
  numRows: bigint;
  kv: Map<string, string>;
}

export class CorruptFooterError extends Error {
  readonly kind = 'corrupt-footer';
}

/**
 * The footer length a tail needs, read from its last 8 bytes; throws when the
 * bytes do not end with the Parquet magic.
 */
export function footerLength(tail: Uint8Array): number {
  if (tail.length < 8) throw new CorruptFooterError('file shorter than a Parquet footer');
  const end = tail.length;
  const magic = String.fromCharCode(
    tail[end - 4] as number,
    tail[end - 3] as number,
    tail[end - 2] as number,
    tail[end - 1] as number,
  );
  if (magic !== 'PAR1') throw new CorruptFooterError('file does not end with PAR1');
  return new DataView(tail.buffer, tail.byteOffset + end - 8, 4).getUint32(0, true);
}

/** Parse the footer from the tail of a file (the tail must hold the whole footer). */
export function readFooter(tail: Uint8Array): FooterInfo {
  const length = footerLength(tail);
  const start = tail.length - 8 - length;
  if (start < 0) throw new CorruptFooterError(`footer of ${length} bytes exceeds the tail read`);
  const r = new CompactReader(tail.subarray(start, tail.length - 8));
  const info: FooterInfo = { numRows: 0n, kv: new Map() };
  r.readStruct((id, type) => {
    if (id === 3 && type === T_I64) info.numRows = r.readVarLong();
    else if (id === 5 && type === T_LIST) {
      const { size } = r.readListHeader();
      for (let i = 0; i < size; i++) {
        let key = '';
        let value = '';
        r.readStruct((kid, ktype) => {
          if (kid === 1 && ktype === T_BINARY) key = r.readString();
          else if (kid === 2 && ktype === T_BINARY) value = r.readString();
          else r.skip(ktype);
        });
        info.kv.set(key, value);
      }
    } else r.skip(type);
  });
  return info;
}

const T_STOP = 0;
const T_TRUE = 1;
const T_FALSE = 2;
const T_BYTE = 3;
const T_I16 = 4;
const T_I32 = 5;
const T_I64 = 6;
const T_DOUBLE = 7;
const T_BINARY = 8;
const T_LIST = 9;
const T_SET = 10;
const T_MAP = 11;
const T_STRUCT = 12;

class CompactReader {
  private pos = 0;
  private readonly decoder = new TextDecoder();
  constructor(private readonly bytes: Uint8Array) {}

  private byte(): number {
    if (this.pos >= this.bytes.length) throw new CorruptFooterError('footer ends mid-field');
    return this.bytes[this.pos++] as number;
  }

  readVarLong(): bigint {
    let shift = 0n;
    let result = 0n;
    for (;;) {
      const b = this.byte();
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) break;
      shift += 7n;
      if (shift > 70n) throw new CorruptFooterError('varint too long');
    }
    return (result >> 1n) ^ -(result & 1n); // zigzag
  }

  private readVarUint(): number {
    let shift = 0;
    let result = 0;
    for (;;) {
      const b = this.byte();
      result += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return result;
      shift += 7;
      if (shift > 49) throw new CorruptFooterError('varint too long');
    }
  }

  readString(): string {
    const length = this.readVarUint();
    if (this.pos + length > this.bytes.length)
      throw new CorruptFooterError('string past footer end');
    const s = this.decoder.decode(this.bytes.subarray(this.pos, this.pos + length));
    this.pos += length;
    return s;
  }

  readListHeader(): { size: number; type: number } {
    const header = this.byte();
    const size = header >> 4 === 15 ? this.readVarUint() : header >> 4;
    return { size, type: header & 0x0f };
  }

  /** Calls `onField` for each field; the callback must consume the field's value. */
  readStruct(onField: (id: number, type: number) => void): void {
    let lastId = 0;
    for (;;) {
      const header = this.byte();
      const type = header & 0x0f;
      if (type === T_STOP) return;
      const delta = header >> 4;
      const id = delta === 0 ? Number(this.readVarLong()) : lastId + delta;
      lastId = id;
      onField(id, type);
    }
  }

  skip(type: number): void {
    switch (type) {
      case T_TRUE:
      case T_FALSE:
        return; // the value is in the field header
      case T_BYTE:
        this.pos += 1;
        return;
      case T_I16:
      case T_I32:
      case T_I64:
        this.readVarLong();
        return;
      case T_DOUBLE:
        this.pos += 8;
        return;
      case T_BINARY: {
        // Read the length first: `pos += read()` would add to pos from before the read.
        const length = this.readVarUint();
        this.pos += length;
        return;
      }
      case T_LIST:
      case T_SET: {
        const { size, type: elem } = this.readListHeader();
        for (let i = 0; i < size; i++) {
          // Booleans in collections take a byte each, unlike in field headers.
          if (elem === T_TRUE || elem === T_FALSE) this.pos += 1;
          else this.skip(elem);
        }
        return;
      }
      case T_MAP: {
        const size = this.readVarUint();
        if (size === 0) return;
        const types = this.byte();
        for (let i = 0; i < size; i++) {
          this.skip(types >> 4);
          this.skip(types & 0x0f);
        }
        return;
      }
      case T_STRUCT:
        this.readStruct((_id, t) => this.skip(t));
        return;
      default:
        throw new CorruptFooterError(`unknown thrift compact type ${type}`);
    }
  }
}

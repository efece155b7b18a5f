/**
 * Parquet files from flat columns (flat-columns.ts): the sink's encoder for rows whose
 * columns are all primitive (Decimal included), which is every CDC row after
 * ExtractNewRecordState.
 * Nested schemas go to hyparquet-writer instead (parquet-encoder.ts).
 *
 * Why a second encoder: hyparquet-writer takes JS values (a number or BigInt per
 * value, strings it dictionary-encodes again) and was, after JSON decoding, the
 * sink's largest CPU cost. This one reads typed arrays and writes bytes:
 *   - INT32, INT64, FLOAT, DOUBLE: PLAIN, copied straight from the typed array when no
 *     row is null;
 *   - BOOLEAN: PLAIN (bit-packed);
 *   - strings the buffer kept as a dictionary: a PLAIN dictionary page per column
 *     chunk (the entries that row group uses, in order of first use) and
 *     RLE_DICTIONARY data pages; other byte arrays: PLAIN;
 *   - definition levels for OPTIONAL columns: RLE/bit-packed hybrid, width 1.
 * Data pages are version 1 (what parquet-mr, Arrow and DuckDB write by default, so
 * every reader takes them) and hold at most about PAGE_BYTES before compression.
 * Column chunks carry statistics (null count, min and max; byte strings longer than
 * MAX_STAT_BYTES and DECIMAL columns get no min/max rather than a truncated or
 * wrongly ordered one) and the footer the
 * type-defined column order, so readers trust min_value/max_value.
 * Page indexes, as parquet-mr and Arrow write them, after the row groups: an
 * OffsetIndex per column chunk (where each data page is, and its first row) and a
 * ColumnIndex (each page's null count, min and max, and whether pages ascend or
 * descend) for every chunk whose pages all have bounds, so readers skip pages, not only
 * row groups.
 *
 * Deterministic like the other encoder: the same columns, schema, codec and metadata
 * give the same bytes.
 */
import type { SchemaElement } from 'hyparquet-writer';
import { codecName, compressorFor } from './codecs.ts';
import type { ByteStrings, FlatColumnData } from './flat-columns.ts';
import type { EncodeOptions } from './parquet-encoder.ts';
import { ThriftWriter, TType } from './thrift-compact.ts';

export const PAGE_BYTES = 1024 * 1024;
/** Longer byte-string min/max are left out of the statistics. */
export const MAX_STAT_BYTES = 64;

const MAGIC = new TextEncoder().encode('PAR1');
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

const PARQUET_TYPES = [
  'BOOLEAN',
  'INT32',
  'INT64',
  'INT96',
  'FLOAT',
  'DOUBLE',
  'BYTE_ARRAY',
  'FIXED_LEN_BYTE_ARRAY',
];
/** LogicalType union members this encoder writes, by their field id in parquet.thrift. */
const LOGICAL_TYPE_FIELDS = { TIME: 7, TIMESTAMP: 8, JSON: 12, UUID: 14 } as const;
const REPETITIONS = ['REQUIRED', 'OPTIONAL', 'REPEATED'];
const CONVERTED_TYPES = [
  'UTF8',
  'MAP',
  'MAP_KEY_VALUE',
  'LIST',
  'ENUM',
  'DECIMAL',
  'DATE',
  'TIME_MILLIS',
  'TIME_MICROS',
  'TIMESTAMP_MILLIS',
  'TIMESTAMP_MICROS',
  'UINT_8',
  'UINT_16',
  'UINT_32',
  'UINT_64',
  'INT_8',
  'INT_16',
  'INT_32',
  'INT_64',
  'JSON',
  'BSON',
  'INTERVAL',
];
/** CompressionCodec numbers in parquet.thrift. */
const CODECS = { UNCOMPRESSED: 0, SNAPPY: 1, GZIP: 2, BROTLI: 4, ZSTD: 6, LZ4_RAW: 7 } as const;
const TIME_UNITS = { MILLIS: 1, MICROS: 2, NANOS: 3 } as const;
const Encoding = { PLAIN: 0, RLE: 3, RLE_DICTIONARY: 8 } as const;
const PageType = { DATA_PAGE: 0, DICTIONARY_PAGE: 2 } as const;

interface ChunkMeta {
  type: number;
  codec: number;
  name: string;
  encodings: number[];
  numValues: number;
  uncompressed: number;
  compressed: number;
  dataPageOffset: number;
  dictionaryPageOffset: number | undefined;
  nullCount: number;
  min: Uint8Array | undefined;
  max: Uint8Array | undefined;
  /** The data pages, in order, for the page indexes. */
  pages: PageEntry[];
  offsetIndex: { offset: number; length: number } | undefined;
  columnIndex: { offset: number; length: number } | undefined;
}

interface PageEntry {
  offset: number;
  /** Header and (compressed) body. */
  size: number;
  /** Relative to the row group. */
  firstRow: number;
  rows: number;
  nulls: number;
  min: Uint8Array | undefined;
  max: Uint8Array | undefined;
  /**
   * The bounds of a numeric page as numbers or bigints, which compare in the column's
   * order (for the boundary order); undefined for byte strings, whose `min` and `max`
   * bytes compare as they are.
   */
  order: [number | bigint, number | bigint] | undefined;
}

/** A data page's rows and statistics, before it is written. */
type PageStats = Omit<PageEntry, 'offset' | 'size'>;

interface RowGroupMeta {
  rows: number;
  offset: number;
  columns: ChunkMeta[];
}

/** Whether the flat encoder writes this schema: a root of primitive columns it knows. */
function isFlatSchema(elements: readonly SchemaElement[]): boolean {
  return elements
    .slice(1)
    .every(
      (e) =>
        e.num_children === undefined &&
        e.repetition_type !== 'REPEATED' &&
        e.type !== undefined &&
        PARQUET_TYPES.indexOf(e.type) >= 0 &&
        e.type !== 'INT96' &&
        (e.logical_type === undefined || Object.hasOwn(LOGICAL_TYPE_FIELDS, e.logical_type.type)),
    );
}

export function encodeFlatParquet(
  elements: readonly SchemaElement[],
  columns: readonly FlatColumnData[],
  rowGroupRows: number,
  options: EncodeOptions,
  createdBy: string,
): Uint8Array {
  if (elements.length !== columns.length + 1 || !isFlatSchema(elements)) {
    throw new Error('the flat Parquet encoder takes a root of primitive columns only');
  }
  const rows = columns[0]?.rows ?? 0;
  for (const c of columns) {
    if (c.rows !== rows) throw new Error('flat columns of different lengths');
  }
  const codec = codecName(options.codec);
  const file = new FileSink(CODECS[codec], compressorFor(codec, options.zstdLevel));
  file.write(MAGIC);
  const groups: RowGroupMeta[] = [];
  for (let start = 0; start < rows; start += rowGroupRows) {
    const end = Math.min(rows, start + rowGroupRows);
    const group: RowGroupMeta = { rows: end - start, offset: file.offset, columns: [] };
    columns.forEach((c, i) => {
      group.columns.push(file.columnChunk(elements[i + 1] as SchemaElement, c, start, end));
    });
    groups.push(group);
  }
  // Page indexes: every ColumnIndex, then every OffsetIndex, as parquet-mr lays them out.
  for (const c of groups.flatMap((g) => g.columns)) {
    // Only where every page holding a value has bounds (not DECIMAL, nor long strings).
    if (!c.pages.every((p) => p.nulls === p.rows || p.min !== undefined)) continue;
    const bytes = columnIndexBytes(c.pages);
    c.columnIndex = { offset: file.offset, length: bytes.length };
    file.write(bytes);
  }
  for (const c of groups.flatMap((g) => g.columns)) {
    const bytes = offsetIndexBytes(c.pages);
    c.offsetIndex = { offset: file.offset, length: bytes.length };
    file.write(bytes);
  }
  const footer = footerBytes(elements, rows, groups, options, createdBy);
  file.write(footer);
  const length = new Uint8Array(4);
  new DataView(length.buffer).setUint32(0, footer.length, true);
  file.write(length);
  file.write(MAGIC);
  return file.bytes();
}

/** The file being written: its parts, and a scratch buffer for page bodies. */
class FileSink {
  offset = 0;
  private readonly parts: Uint8Array[] = [];
  private readonly page = new PageBuilder();
  private readonly header = new ThriftWriter();

  constructor(
    private readonly codec: number,
    private readonly compress: ((input: Uint8Array) => Uint8Array) | undefined,
  ) {}

  write(bytes: Uint8Array): void {
    this.parts.push(bytes);
    this.offset += bytes.length;
  }

  bytes(): Uint8Array {
    return Buffer.concat(this.parts, this.offset);
  }

  columnChunk(element: SchemaElement, c: FlatColumnData, start: number, end: number): ChunkMeta {
    const optional = element.repetition_type === 'OPTIONAL';
    const nulls = c.nulls;
    let nullCount = 0;
    if (nulls !== undefined) for (let i = start; i < end; i++) nullCount += nulls[i] as number;
    if (nullCount > 0 && !optional) {
      throw new Error(`column '${element.name}' is required but has ${nullCount} null(s)`);
    }
    const meta: ChunkMeta = {
      type: PARQUET_TYPES.indexOf(element.type as string),
      codec: this.codec,
      name: element.name,
      encodings: [],
      numValues: end - start,
      uncompressed: 0,
      compressed: 0,
      dataPageOffset: 0,
      dictionaryPageOffset: undefined,
      nullCount,
      min: undefined,
      max: undefined,
      pages: [],
      offsetIndex: undefined,
      columnIndex: undefined,
    };
    const hasNulls = nullCount > 0 ? nulls : undefined;
    const page = this.page;
    if (c.kind === 'dictionary' && nullCount === end - start) {
      // Every row null: definition levels only, no dictionary to write.
      // One page: a run of zeros is a few bytes for any number of rows.
      meta.dataPageOffset = this.offset;
      meta.encodings = [Encoding.PLAIN, Encoding.RLE];
      page.reset();
      page.levels(hasNulls, start, end);
      const rows = end - start;
      this.writePage(meta, PageType.DATA_PAGE, rows, Encoding.PLAIN, {
        firstRow: 0,
        rows,
        nulls: rows,
        min: undefined,
        max: undefined,
        order: undefined,
      });
      return meta;
    }
    if (c.kind === 'dictionary') {
      const { data, offsets } = c.dictionary;
      const local = localDictionary(c.indices, offsets.length - 1, hasNulls, start, end);
      meta.dictionaryPageOffset = this.offset;
      page.reset();
      for (const g of local.used) {
        const e = data.subarray(offsets[g] as number, offsets[g + 1] as number);
        page.u32(e.length);
        page.bytes(e);
      }
      this.writePage(meta, PageType.DICTIONARY_PAGE, local.used.length, Encoding.PLAIN);
      [meta.min, meta.max] = byteStringStats(
        c.dictionary,
        byteStringRange(c.dictionary, local.used),
      );
      const width = Math.max(1, 32 - Math.clz32(local.used.length - 1));
      const perPage = Math.max(1, Math.floor((PAGE_BYTES * 8) / width));
      meta.dataPageOffset = this.offset;
      // The entries each page uses, once each, for its bounds (seen[l] is the page).
      const seen = new Int32Array(local.used.length).fill(-1);
      // local.indices holds non-null rows only: `at` is the first one of the page.
      let at = 0;
      for (let p = start; p < end; p += perPage) {
        const q = Math.min(end, p + perPage);
        const present = countPresent(hasNulls, p, q);
        const entries: number[] = [];
        for (let k = at; k < at + present; k++) {
          const l = local.indices[k] as number;
          if (seen[l] !== p) {
            seen[l] = p;
            entries.push(local.used[l] as number);
          }
        }
        const [min, max] = byteStringStats(c.dictionary, byteStringRange(c.dictionary, entries));
        page.reset();
        if (optional) page.levels(hasNulls, p, q);
        page.u8(width);
        page.hybrid(local.indices, at, at + present, width);
        at += present;
        this.writePage(meta, PageType.DATA_PAGE, q - p, Encoding.RLE_DICTIONARY, {
          firstRow: p - start,
          rows: q - p,
          nulls: q - p - present,
          min,
          max,
          order: undefined,
        });
      }
      meta.encodings = optional
        ? [Encoding.PLAIN, Encoding.RLE, Encoding.RLE_DICTIONARY]
        : [Encoding.PLAIN, Encoding.RLE_DICTIONARY];
      return meta;
    }
    meta.dataPageOffset = this.offset;
    meta.encodings = optional ? [Encoding.PLAIN, Encoding.RLE] : [Encoding.PLAIN];
    // DECIMAL orders as signed numbers, not as the unsigned bytes a range compares:
    // null counts only.
    const ranged = element.converted_type !== 'DECIMAL';
    let chunk: ValueRange | undefined;
    for (const [p, q] of pageRanges(c, start, end)) {
      const range = ranged ? valueRange(c, hasNulls, p, q) : undefined;
      chunk = wider(c, chunk, range);
      const [min, max] = rangeStats(c, range);
      page.reset();
      if (optional) page.levels(hasNulls, p, q);
      page.plainValues(c, hasNulls, p, q, element.type === 'FIXED_LEN_BYTE_ARRAY');
      this.writePage(meta, PageType.DATA_PAGE, q - p, Encoding.PLAIN, {
        firstRow: p - start,
        rows: q - p,
        nulls: q - p - countPresent(hasNulls, p, q),
        min,
        max,
        order: c.kind === 'plain' ? undefined : range,
      });
    }
    [meta.min, meta.max] = rangeStats(c, chunk);
    return meta;
  }

  /**
   * Compress the page body built in `page`, and write its header and body. A data page
   * comes with its statistics (`stats`), kept for the page indexes.
   */
  private writePage(
    meta: ChunkMeta,
    type: number,
    values: number,
    encoding: number,
    stats?: PageStats,
  ): void {
    const offset = this.offset;
    const body = this.page.view();
    const compressed = this.compress ? this.compress(body) : body.slice();
    const h = this.header;
    h.reset();
    h.i32(1, type).i32(2, body.length).i32(3, compressed.length);
    if (type === PageType.DICTIONARY_PAGE) {
      h.struct(7).i32(1, values).i32(2, encoding).end();
    } else {
      h.struct(5).i32(1, values).i32(2, encoding).i32(3, Encoding.RLE).i32(4, Encoding.RLE).end();
    }
    h.end();
    const header = h.bytes().slice();
    this.write(header);
    this.write(compressed);
    meta.uncompressed += header.length + body.length;
    meta.compressed += header.length + compressed.length;
    if (stats !== undefined) {
      meta.pages.push({ ...stats, offset, size: header.length + compressed.length });
    }
  }
}

/** Page boundaries [p, q) of at most about PAGE_BYTES of values each. */
function pageRanges(c: FlatColumnData, start: number, end: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  if (c.kind === 'plain') {
    const offsets = c.strings.offsets;
    let p = start;
    for (let i = start; i < end; i++) {
      const bytes = (offsets[i + 1] as number) - (offsets[p] as number) + 4 * (i + 1 - p);
      if (bytes >= PAGE_BYTES) {
        out.push([p, i + 1]);
        p = i + 1;
      }
    }
    if (p < end || out.length === 0) out.push([p, end]);
    return out;
  }
  const width = c.kind === 'boolean' ? 1 / 8 : c.kind === 'int32' || c.kind === 'float' ? 4 : 8;
  const perPage = Math.max(1, Math.floor(PAGE_BYTES / width));
  for (let p = start; p < end; p += perPage) out.push([p, Math.min(end, p + perPage)]);
  if (out.length === 0) out.push([start, end]);
  return out;
}

/** Rows in [p, q) that are not null. */
function countPresent(nulls: Uint8Array | undefined, p: number, q: number): number {
  if (nulls === undefined) return q - p;
  let n = 0;
  for (let r = p; r < q; r++) if (nulls[r] === 0) n++;
  return n;
}

/**
 * The dictionary of one column chunk: the buffer's entries its rows use (`used`, in
 * order of first use), and an index into `used` per non-null row.
 */
function localDictionary(
  indices: Int32Array,
  entries: number,
  nulls: Uint8Array | undefined,
  start: number,
  end: number,
): { used: number[]; indices: Int32Array } {
  const map = new Int32Array(entries).fill(-1);
  const used: number[] = [];
  const local = new Int32Array(end - start);
  let n = 0;
  for (let r = start; r < end; r++) {
    if (nulls !== undefined && nulls[r] === 1) continue;
    const g = indices[r] as number;
    let l = map[g] as number;
    if (l < 0) {
      l = used.length;
      map[g] = l;
      used.push(g);
    }
    local[n++] = l;
  }
  return { used, indices: local.subarray(0, n) };
}

/**
 * The entries `which` lists that are least and greatest in unsigned byte-wise order
 * (Parquet's order for UTF-8 and byte strings), compared in place rather than cut out
 * one by one; undefined when it lists none.
 */
function byteStringRange(
  strings: ByteStrings,
  which: Iterable<number>,
): [number, number] | undefined {
  let min = -1;
  let max = -1;
  for (const e of which) {
    if (min < 0 || compareEntries(strings, e, min) < 0) min = e;
    if (max < 0 || compareEntries(strings, e, max) > 0) max = e;
  }
  return min < 0 ? undefined : [min, max];
}

/** Entry a against entry b, in place (a Uint8Array, as it arrives from the task, is fine). */
function compareEntries({ data, offsets }: ByteStrings, a: number, b: number): number {
  return compareBytes.call(
    data,
    data,
    offsets[b] as number,
    offsets[b + 1] as number,
    offsets[a] as number,
    offsets[a + 1] as number,
  );
}

const compareBytes = Buffer.prototype.compare;

/** The entries of a range as statistics; none when either is longer than MAX_STAT_BYTES. */
function byteStringStats(
  { data, offsets }: ByteStrings,
  range: [number, number] | undefined,
): [Uint8Array | undefined, Uint8Array | undefined] {
  if (range === undefined) return [undefined, undefined];
  const entry = (i: number) => data.subarray(offsets[i] as number, offsets[i + 1] as number);
  const [lo, hi] = [entry(range[0]), entry(range[1])];
  if (lo.length > MAX_STAT_BYTES || hi.length > MAX_STAT_BYTES) return [undefined, undefined];
  return [lo.slice(), hi.slice()];
}

/** The rows of [start, end) that are not null. */
function* presentRows(nulls: Uint8Array | undefined, start: number, end: number) {
  for (let r = start; r < end; r++) if (nulls === undefined || nulls[r] === 0) yield r;
}

/** Least and greatest non-null value: numbers, or entries of a plain byte-string column. */
type ValueRange = [number | bigint, number | bigint];

/** The range of the non-null values in [start, end) of a plain (not dictionary) column. */
function valueRange(
  c: FlatColumnData,
  nulls: Uint8Array | undefined,
  start: number,
  end: number,
): ValueRange | undefined {
  if (c.kind === 'plain') return byteStringRange(c.strings, presentRows(nulls, start, end));
  if (c.kind === 'dictionary') throw new Error('dictionary ranges come from the dictionary');
  const values = c.values;
  let min: number | bigint | undefined;
  let max: number | bigint | undefined;
  for (let r = start; r < end; r++) {
    if (nulls !== undefined && nulls[r] === 1) continue;
    const v = values[r] as number | bigint;
    if (typeof v === 'number' && Number.isNaN(v)) continue;
    if (min === undefined || v < min) min = v;
    if (max === undefined || v > max) max = v;
  }
  return min === undefined || max === undefined ? undefined : [min, max];
}

/** The range covering both (a chunk's, from its pages'). */
function wider(
  c: FlatColumnData,
  a: ValueRange | undefined,
  b: ValueRange | undefined,
): ValueRange | undefined {
  if (a === undefined || b === undefined) return a ?? b;
  if (c.kind === 'plain') {
    const [aMin, aMax] = a as [number, number];
    const [bMin, bMax] = b as [number, number];
    return [
      compareEntries(c.strings, bMin, aMin) < 0 ? bMin : aMin,
      compareEntries(c.strings, bMax, aMax) > 0 ? bMax : aMax,
    ];
  }
  // Not Math.min/max: int64 ranges may be bigints.
  // biome-ignore lint/complexity/useMathMinMax: bigint values
  const min = b[0] < a[0] ? b[0] : a[0];
  // biome-ignore lint/complexity/useMathMinMax: bigint values
  const max = b[1] > a[1] ? b[1] : a[1];
  return [min, max];
}

/** A range as min and max statistics, in Parquet's plain encoding of the column's type. */
function rangeStats(
  c: FlatColumnData,
  range: ValueRange | undefined,
): [Uint8Array | undefined, Uint8Array | undefined] {
  if (range === undefined) return [undefined, undefined];
  if (c.kind === 'plain') return byteStringStats(c.strings, range as [number, number]);
  if (c.kind === 'dictionary') throw new Error('dictionary ranges come from the dictionary');
  let [min, max] = range;
  // Parquet: a zero min is written -0 and a zero max +0, whatever their sign.
  if (min === 0) min = -0;
  if (max === 0) max = 0;
  return [statValue(c.kind, min), statValue(c.kind, max)];
}

function statValue(kind: FlatColumnData['kind'], v: number | bigint): Uint8Array {
  const size = kind === 'boolean' ? 1 : kind === 'int32' || kind === 'float' ? 4 : 8;
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  switch (kind) {
    case 'boolean':
      out[0] = Number(v);
      break;
    case 'int32':
      view.setInt32(0, Number(v), true);
      break;
    case 'float':
      view.setFloat32(0, Number(v), true);
      break;
    case 'double':
      view.setFloat64(0, Number(v), true);
      break;
    default:
      view.setBigInt64(0, BigInt(v), true);
  }
  return out;
}

/** A growing byte buffer for one page body. */
class PageBuilder {
  private buf = new Uint8Array(PAGE_BYTES + 64 * 1024);
  private dv = new DataView(this.buf.buffer);
  private pos = 0;

  reset(): void {
    this.pos = 0;
  }

  view(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }

  u8(b: number): void {
    this.ensure(1);
    this.buf[this.pos++] = b;
  }

  u32(n: number): void {
    this.ensure(4);
    this.dv.setUint32(this.pos, n, true);
    this.pos += 4;
  }

  bytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** Definition levels of rows [p, q) (1 present, 0 null), with their 4-byte length. */
  levels(nulls: Uint8Array | undefined, p: number, q: number): void {
    const lengthAt = this.pos;
    this.u32(0);
    if (nulls === undefined) {
      this.rleRun(1, q - p, 1);
    } else {
      const levels = new Int32Array(q - p);
      for (let r = p; r < q; r++) levels[r - p] = 1 - (nulls[r] as number);
      this.hybrid(levels, 0, levels.length, 1);
    }
    this.dv.setUint32(lengthAt, this.pos - lengthAt - 4, true);
  }

  /**
   * The non-null values of rows [p, q) in PLAIN encoding; byte strings of a
   * FIXED_LEN_BYTE_ARRAY column (`fixedLength`) go without their length.
   */
  plainValues(
    c: FlatColumnData,
    nulls: Uint8Array | undefined,
    p: number,
    q: number,
    fixedLength = false,
  ): void {
    switch (c.kind) {
      case 'int32':
      case 'float':
      case 'double':
        this.fixed(c.values, nulls, p, q);
        return;
      case 'int64':
        if (c.values instanceof BigInt64Array) this.fixed(c.values, nulls, p, q);
        else this.int64FromDoubles(c.values, nulls, p, q);
        return;
      case 'boolean':
        this.booleans(c.values, nulls, p, q);
        return;
      case 'plain': {
        const { data, offsets } = c.strings;
        for (let r = p; r < q; r++) {
          if (nulls !== undefined && nulls[r] === 1) continue;
          const s = offsets[r] as number;
          const e = offsets[r + 1] as number;
          if (!fixedLength) this.u32(e - s);
          this.ensure(e - s);
          this.buf.set(data.subarray(s, e), this.pos);
          this.pos += e - s;
        }
        return;
      }
      case 'dictionary':
        throw new Error('dictionary columns are written as RLE_DICTIONARY');
    }
  }

  /**
   * values[from, to) in the RLE/bit-packed hybrid encoding at `width` bits: runs of
   * 8 or more equal values as RLE runs, the rest bit-packed in groups of 8.
   */
  hybrid(values: Int32Array, from: number, to: number, width: number): void {
    let i = from;
    while (i < to) {
      const run = runLength(values, i, to);
      if (run >= 8) {
        this.rleRun(values[i] as number, run, width);
        i += run;
        continue;
      }
      // Literal groups of 8 until a run of 8 starts at a group boundary, or the end.
      let k = i;
      do k += 8;
      while (k < to && runLength(values, k, to) < 8);
      this.bitPacked(values, i, Math.min(k, to), (k - i) / 8, width);
      i = Math.min(k, to);
    }
  }

  private rleRun(value: number, count: number, width: number): void {
    this.varint(count * 2);
    for (let b = 0; b < width; b += 8) this.u8((value >>> b) & 0xff);
  }

  /** values[from, to) bit-packed LSB first, padded with zeros to `groups` * 8 values. */
  private bitPacked(
    values: Int32Array,
    from: number,
    to: number,
    groups: number,
    width: number,
  ): void {
    this.varint(groups * 2 + 1);
    this.ensure(groups * width);
    const buf = this.buf;
    let pos = this.pos;
    let acc = 0;
    let bits = 0;
    const total = groups * 8;
    for (let n = 0; n < total; n++) {
      const v = from + n < to ? (values[from + n] as number) : 0;
      acc |= v << bits;
      bits += width;
      while (bits >= 8) {
        buf[pos++] = acc & 0xff;
        acc >>>= 8;
        bits -= 8;
      }
    }
    this.pos = pos;
  }

  private fixed(
    values: Int32Array | Float32Array | Float64Array | BigInt64Array,
    nulls: Uint8Array | undefined,
    p: number,
    q: number,
  ): void {
    const size = values.BYTES_PER_ELEMENT;
    if (nulls === undefined && LITTLE_ENDIAN) {
      this.bytes(new Uint8Array(values.buffer, values.byteOffset + p * size, (q - p) * size));
      return;
    }
    // Nulls present (or a big-endian machine): value by value, skipping null rows.
    this.ensure((q - p) * size);
    const dv = this.dv;
    let pos = this.pos;
    const put =
      values instanceof Int32Array
        ? (at: number, r: number) => dv.setInt32(at, values[r] as number, true)
        : values instanceof Float32Array
          ? (at: number, r: number) => dv.setFloat32(at, values[r] as number, true)
          : values instanceof Float64Array
            ? (at: number, r: number) => dv.setFloat64(at, values[r] as number, true)
            : (at: number, r: number) => dv.setBigInt64(at, values[r] as bigint, true);
    for (let r = p; r < q; r++) {
      if (nulls !== undefined && nulls[r] === 1) continue;
      put(pos, r);
      pos += size;
    }
    this.pos = pos;
  }

  /** Safe integers kept as doubles, written as little-endian int64. */
  private int64FromDoubles(
    values: Float64Array,
    nulls: Uint8Array | undefined,
    p: number,
    q: number,
  ): void {
    this.ensure((q - p) * 8);
    const dv = this.dv;
    let pos = this.pos;
    for (let r = p; r < q; r++) {
      if (nulls !== undefined && nulls[r] === 1) continue;
      const v = values[r] as number;
      const hi = Math.floor(v / 4294967296);
      dv.setUint32(pos, v - hi * 4294967296, true);
      dv.setInt32(pos + 4, hi, true);
      pos += 8;
    }
    this.pos = pos;
  }

  private booleans(values: Uint8Array, nulls: Uint8Array | undefined, p: number, q: number): void {
    this.ensure(Math.ceil((q - p) / 8));
    const buf = this.buf;
    let pos = this.pos;
    let acc = 0;
    let bits = 0;
    for (let r = p; r < q; r++) {
      if (nulls !== undefined && nulls[r] === 1) continue;
      acc |= (values[r] as number) << bits;
      if (++bits === 8) {
        buf[pos++] = acc;
        acc = 0;
        bits = 0;
      }
    }
    if (bits > 0) buf[pos++] = acc;
    this.pos = pos;
  }

  private varint(n: number): void {
    this.ensure(5);
    let v = n;
    while (v >= 0x80) {
      this.buf[this.pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[this.pos++] = v;
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.pos + n));
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.dv = new DataView(next.buffer);
  }
}

function runLength(values: Int32Array, i: number, to: number): number {
  const v = values[i];
  let j = i + 1;
  while (j < to && values[j] === v) j++;
  return j - i;
}

function footerBytes(
  elements: readonly SchemaElement[],
  rows: number,
  groups: readonly RowGroupMeta[],
  options: EncodeOptions,
  createdBy: string,
): Uint8Array {
  const w = new ThriftWriter(4096);
  w.i32(1, 1);
  w.list(2, TType.Struct, elements.length);
  for (const e of elements) schemaElement(w, e);
  w.i64(3, rows);
  w.list(4, TType.Struct, groups.length);
  for (const g of groups) rowGroup(w, g);
  if (options.kv.length > 0) {
    w.list(5, TType.Struct, options.kv.length);
    for (const { key, value } of options.kv) w.element().string(1, key).string(2, value).end();
  }
  w.string(6, createdBy);
  // TypeDefinedOrder for every leaf: readers then trust min_value / max_value.
  w.list(7, TType.Struct, elements.length - 1);
  for (let i = 1; i < elements.length; i++) w.element().struct(1).end().end();
  w.end();
  return w.bytes().slice();
}

function schemaElement(w: ThriftWriter, e: SchemaElement): void {
  w.element();
  if (e.type !== undefined) w.i32(1, PARQUET_TYPES.indexOf(e.type));
  if (e.type_length !== undefined) w.i32(2, e.type_length);
  if (e.repetition_type !== undefined) w.i32(3, REPETITIONS.indexOf(e.repetition_type));
  w.string(4, e.name);
  if (e.num_children !== undefined) w.i32(5, e.num_children);
  const logical = e.logical_type;
  // JSON's converted type beside its logical type, for readers that know only the former.
  const converted = e.converted_type ?? (logical?.type === 'JSON' ? 'JSON' : undefined);
  if (converted !== undefined) w.i32(6, CONVERTED_TYPES.indexOf(converted));
  if (e.scale !== undefined) w.i32(7, e.scale);
  if (e.precision !== undefined) w.i32(8, e.precision);
  if (logical !== undefined) {
    if (!Object.hasOwn(LOGICAL_TYPE_FIELDS, logical.type)) {
      throw new Error(`logical type ${logical.type} is not written by the flat encoder`);
    }
    w.struct(10).struct(LOGICAL_TYPE_FIELDS[logical.type as keyof typeof LOGICAL_TYPE_FIELDS]);
    if (logical.type === 'TIME' || logical.type === 'TIMESTAMP') {
      w.bool(1, logical.isAdjustedToUTC).struct(2).struct(TIME_UNITS[logical.unit]).end().end();
    }
    w.end().end();
  }
  w.end();
}

function rowGroup(w: ThriftWriter, g: RowGroupMeta): void {
  w.element();
  w.list(1, TType.Struct, g.columns.length);
  let uncompressed = 0;
  let compressed = 0;
  for (const c of g.columns) {
    uncompressed += c.uncompressed;
    compressed += c.compressed;
    const chunkStart = c.dictionaryPageOffset ?? c.dataPageOffset;
    w.element().i64(2, chunkStart).struct(3);
    w.i32(1, c.type);
    w.list(2, TType.I32, c.encodings.length);
    for (const e of c.encodings) w.i32Element(e);
    w.list(3, TType.Binary, 1).binaryElement(c.name);
    w.i32(4, c.codec);
    w.i64(5, c.numValues).i64(6, c.uncompressed).i64(7, c.compressed).i64(9, c.dataPageOffset);
    if (c.dictionaryPageOffset !== undefined) w.i64(11, c.dictionaryPageOffset);
    w.struct(12).i64(3, c.nullCount);
    if (c.max !== undefined && c.min !== undefined) w.binary(5, c.max).binary(6, c.min);
    w.end();
    w.end();
    if (c.offsetIndex !== undefined) w.i64(4, c.offsetIndex.offset).i32(5, c.offsetIndex.length);
    if (c.columnIndex !== undefined) w.i64(6, c.columnIndex.offset).i32(7, c.columnIndex.length);
    w.end();
  }
  w.i64(2, uncompressed).i64(3, g.rows).i64(5, g.offset).i64(6, compressed);
  w.end();
}

/** OffsetIndex: each data page's offset, size (header included) and first row. */
function offsetIndexBytes(pages: readonly PageEntry[]): Uint8Array {
  const w = new ThriftWriter(64 + pages.length * 16);
  w.list(1, TType.Struct, pages.length);
  for (const p of pages) w.element().i64(1, p.offset).i32(2, p.size).i64(3, p.firstRow).end();
  w.end();
  return w.bytes().slice();
}

const BoundaryOrder = { UNORDERED: 0, ASCENDING: 1, DESCENDING: 2 } as const;

/**
 * ASCENDING when, from page to page (all-null pages left out), neither min nor max goes
 * down; DESCENDING when neither goes up; else UNORDERED. Readers binary-search ordered
 * pages (a CDC table's key, a timestamp). One page is ASCENDING, as parquet-mr has it.
 */
function boundaryOrder(pages: readonly PageEntry[]): number {
  let ascending = true;
  let descending = true;
  let last: PageEntry | undefined;
  for (const p of pages) {
    if (p.nulls === p.rows) continue;
    if (last !== undefined) {
      const lo = compareBound(last, p, 0);
      const hi = compareBound(last, p, 1);
      if (lo > 0 || hi > 0) ascending = false;
      if (lo < 0 || hi < 0) descending = false;
    }
    last = p;
  }
  return ascending
    ? BoundaryOrder.ASCENDING
    : descending
      ? BoundaryOrder.DESCENDING
      : BoundaryOrder.UNORDERED;
}

/** a's bound against b's (0: min, 1: max), in the column's order. */
function compareBound(a: PageEntry, b: PageEntry, which: 0 | 1): number {
  if (a.order !== undefined && b.order !== undefined) {
    const x = a.order[which];
    const y = b.order[which];
    return x < y ? -1 : x > y ? 1 : 0;
  }
  // Byte strings: their statistics are the bytes, in Parquet's unsigned order.
  return Buffer.compare(
    (which === 0 ? a.min : a.max) as Uint8Array,
    (which === 0 ? b.min : b.max) as Uint8Array,
  );
}

/** ColumnIndex: per data page, whether it is all nulls, its min and max, its null count. */
function columnIndexBytes(pages: readonly PageEntry[]): Uint8Array {
  const w = new ThriftWriter(64 + pages.length * 32);
  const empty = new Uint8Array(0);
  w.list(1, TType.True, pages.length);
  for (const p of pages) w.boolElement(p.nulls === p.rows);
  w.list(2, TType.Binary, pages.length);
  for (const p of pages) w.binaryElement(p.min ?? empty);
  w.list(3, TType.Binary, pages.length);
  for (const p of pages) w.binaryElement(p.max ?? empty);
  w.i32(4, boundaryOrder(pages));
  w.list(5, TType.I64, pages.length);
  for (const p of pages) w.i64Element(p.nulls);
  w.end();
  return w.bytes().slice();
}

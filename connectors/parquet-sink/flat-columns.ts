/**
 * Column builders for flat rows: one per top-level column of a primitive type, each
 * keeping its values in a growing typed array rather than as JS values in an array.
 *
 * Why: a CDC row of 8 columns buffered as JS values is 8 array slots, a boxed double
 * or a BigInt per integer, and later a structured clone of all of it to the encoder
 * thread. In typed arrays it is a few bytes per value, nothing for the garbage
 * collector to trace, and the arrays move to the encoder thread by transfer. The
 * encoder (flat-parquet-encoder.ts) writes pages straight from them.
 *
 * Strings are kept dictionary-encoded while the dictionary stays small (at most
 * DICTIONARY_MAX_ENTRIES entries and DICTIONARY_MAX_BYTES of UTF-8, parquet-mr's
 * dictionary page limit): an index per row and each distinct string once. A column
 * whose dictionary outgrows that switches to plain UTF-8 bytes with offsets, and stays
 * plain. Both depend only on the values, so a replay buffers the same way.
 *
 * Values are checked as they arrive (a wrong JS type, an int64 out of range) and the
 * builder throws a RowError naming the column; the row buffer then truncates every
 * column back to the previous row.
 */
import type { Schema } from '../../src/connect/api/index.ts';
import { LogicalType, unscaledToBytes } from '../../src/connect/api/index.ts';
import {
  DEFAULT_SEMANTIC_TYPES,
  DebeziumType,
  type SemanticTypes,
  uuidBytes,
  variableScaleDouble,
  variableScaleUnscaled,
  zonedTimeMicros,
  zonedTimestampMicros,
} from './debezium-types.ts';
import { RowError } from './row-error.ts';

export type FlatKind =
  | 'int32'
  | 'int64'
  | 'float'
  | 'double'
  | 'boolean'
  | 'string'
  | 'bytes'
  | 'decimal'
  /** Debezium's semantic types in native mode (debezium-types.ts): parsed as they arrive. */
  | 'zonedTimestamp'
  | 'zonedTime'
  | 'uuid'
  | 'variableDecimal'
  | 'variableDouble';

/** UTF-8 (or raw) byte strings: entry i is data[offsets[i] .. offsets[i + 1]). */
export interface ByteStrings {
  data: Uint8Array;
  offsets: Int32Array;
}

interface Common {
  rows: number;
  /** 1 where the row's value is null; undefined when no row is. */
  nulls: Uint8Array | undefined;
}

/** A column's buffered values, as the encoder takes them (transferable typed arrays). */
export type FlatColumnData = Common &
  (
    | { kind: 'int32'; values: Int32Array }
    /** Safe integers as doubles, or BigInt64Array once a value needed more. */
    | { kind: 'int64'; values: Float64Array | BigInt64Array }
    | { kind: 'float'; values: Float32Array }
    | { kind: 'double'; values: Float64Array }
    | { kind: 'boolean'; values: Uint8Array }
    /** Strings by dictionary: indices per row (0 for nulls) into `dictionary`. */
    | { kind: 'dictionary'; indices: Int32Array; dictionary: ByteStrings }
    /** Byte arrays (or UTF-8 strings) per row; a null row has an empty entry. */
    | { kind: 'plain'; strings: ByteStrings }
  );

export const DICTIONARY_MAX_ENTRIES = 1 << 17;
export const DICTIONARY_MAX_BYTES = 1024 * 1024;
const INITIAL_CAPACITY = 1024;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

export { RowError };

/** The builder kind for a column schema, or undefined when it is not flat (nested). */
export function flatKind(
  schema: Schema,
  types: SemanticTypes = DEFAULT_SEMANTIC_TYPES,
): FlatKind | undefined {
  if (schema.name === LogicalType.Decimal) return schema.type === 'bytes' ? 'decimal' : undefined;
  if (types.debeziumTypes === 'native') {
    switch (schema.name) {
      case DebeziumType.ZonedTimestamp:
        return schema.type === 'string' ? 'zonedTimestamp' : undefined;
      case DebeziumType.ZonedTime:
        return schema.type === 'string' ? 'zonedTime' : undefined;
      case DebeziumType.Uuid:
        return schema.type === 'string' ? 'uuid' : undefined;
      case DebeziumType.VariableScaleDecimal:
        return types.variableScaleDecimal.mode === 'decimal' ? 'variableDecimal' : 'variableDouble';
    }
  }
  switch (schema.type) {
    case 'int8':
    case 'int16':
    case 'int32':
      return 'int32';
    case 'int64':
      return 'int64';
    case 'float32':
      return 'float';
    case 'float64':
      return 'double';
    case 'boolean':
    case 'string':
    case 'bytes':
      return schema.type;
    default:
      return undefined;
  }
}

/** The builder of a flat column (flatKind(schema, types) is defined). */
export function newBuilder(
  schema: Schema,
  name: string,
  optional: boolean,
  types: SemanticTypes = DEFAULT_SEMANTIC_TYPES,
): ColumnBuilder {
  const kind = flatKind(schema, types);
  switch (kind) {
    case 'zonedTimestamp':
      return new ZonedTimestampBuilder(name, optional);
    case 'zonedTime':
      return new ZonedTimeBuilder(name, optional);
    case 'uuid':
      return new UuidBuilder(name, optional);
    case 'variableDecimal': {
      const mapping = types.variableScaleDecimal;
      return new VariableDecimalBuilder(
        name,
        optional,
        mapping.mode === 'decimal' ? mapping.scale : 0,
      );
    }
    case 'variableDouble':
      return new VariableDoubleBuilder(name, optional);
    case 'int32':
      return new Int32Builder(name, optional, INT_RANGE[schema.type as keyof typeof INT_RANGE]);
    case 'int64':
      return new Int64Builder(name, optional);
    case 'float':
      return new FloatBuilder(name, optional);
    case 'double':
      return new DoubleBuilder(name, optional);
    case 'boolean':
      return new BooleanBuilder(name, optional);
    case 'string':
      return new StringBuilder(name, optional);
    case 'bytes':
      return new BytesBuilder(name, optional);
    case 'decimal':
      return new DecimalBuilder(name, optional);
    case undefined:
      throw new Error(`column '${name}' of type ${schema.type} is not a flat column`);
  }
}

interface IntRange {
  min: number;
  max: number;
  type: string;
}

/** The values an INT32 column of a Connect integer type may hold, and the type's name. */
const INT_RANGE: Record<'int8' | 'int16' | 'int32', IntRange> = {
  int8: { min: -128, max: 127, type: 'an 8-bit integer' },
  int16: { min: -32768, max: 32767, type: 'a 16-bit integer' },
  int32: { min: -2147483648, max: 2147483647, type: 'a 32-bit integer' },
};

export abstract class ColumnBuilder {
  rows = 0;
  protected capacity = INITIAL_CAPACITY;
  protected nulls: Uint8Array | undefined;

  constructor(
    readonly name: string,
    public optional: boolean,
  ) {}

  /** Append a non-null value (throws RowError for a value of the wrong type). */
  abstract append(v: unknown): void;

  appendNull(): void {
    if (!this.optional) {
      throw new RowError(`column '${this.name}' is required but the record has no value`);
    }
    if (this.rows >= this.capacity) this.grow();
    this.nulls ??= new Uint8Array(this.capacity);
    this.nulls[this.rows] = 1;
    this.skip();
    this.rows++;
  }

  /** Drop rows from `rows` on (a row that failed half-way). */
  truncate(rows: number): void {
    if (this.nulls !== undefined) this.nulls.fill(0, rows, this.rows);
    this.rows = rows;
  }

  /** Heap bytes the column holds. */
  abstract get bytes(): number;

  /** The buffered values, handed over for good (the builder is not used after). */
  abstract take(): FlatColumnData;

  /** The buffered values as JS values, as a Connect record holds them (null for nulls). */
  abstract values(): unknown[];

  /** Fill the value slot of a null row (the row count is not yet advanced). */
  protected abstract skip(): void;

  /** Double the capacity (a subclass calls this first, then grows its own arrays). */
  protected grow(): void {
    this.capacity *= 2;
    if (this.nulls !== undefined) this.nulls = resized(this.nulls, this.capacity);
  }

  protected common(): Common {
    return { rows: this.rows, nulls: this.nulls?.subarray(0, this.rows) };
  }

  protected isNull(row: number): boolean {
    return this.nulls !== undefined && this.nulls[row] === 1;
  }

  protected wrongType(expected: string, v: unknown): RowError {
    const got =
      v instanceof Uint8Array
        ? 'bytes'
        : typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean'
          ? `${typeof v} ${v}`
          : typeof v;
    return new RowError(`column '${this.name}': expected ${expected}, got ${got}`);
  }
}

function resized<T extends Int32Array | Float64Array | Float32Array | Uint8Array | BigInt64Array>(
  array: T,
  capacity: number,
): T {
  const next = new (array.constructor as new (n: number) => T)(capacity);
  next.set(array as never);
  return next;
}

/**
 * What the fixed-width builders share. Each kind keeps its own append() in its own
 * class, so the typed-array store there only ever sees one array type.
 */
abstract class FixedWidthBuilder<
  A extends Int32Array | Float32Array | Float64Array | Uint8Array,
> extends ColumnBuilder {
  protected data: A;

  constructor(
    name: string,
    optional: boolean,
    private readonly kind: 'int32' | 'float' | 'double' | 'boolean',
    make: (capacity: number) => A,
  ) {
    super(name, optional);
    this.data = make(INITIAL_CAPACITY);
  }

  get bytes(): number {
    return this.data.byteLength + (this.nulls?.byteLength ?? 0);
  }

  take(): FlatColumnData {
    const values = this.data.subarray(0, this.rows);
    return { ...this.common(), kind: this.kind, values } as FlatColumnData;
  }

  values(): unknown[] {
    const out = new Array<unknown>(this.rows);
    for (let i = 0; i < this.rows; i++) {
      out[i] = this.isNull(i) ? null : this.jsValue(this.data[i] as number);
    }
    return out;
  }

  protected jsValue(stored: number): unknown {
    return stored;
  }

  protected skip(): void {
    this.data[this.rows] = 0;
  }

  protected override grow(): void {
    super.grow();
    this.data = resized(this.data, this.capacity);
  }
}

/** int8, int16 and int32 columns (Date and Time too): INT32, each checked for its range. */
class Int32Builder extends FixedWidthBuilder<Int32Array> {
  constructor(
    name: string,
    optional: boolean,
    private readonly range: IntRange,
  ) {
    super(name, optional, 'int32', (n) => new Int32Array(n));
  }

  append(v: unknown): void {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < this.range.min || v > this.range.max) {
      throw this.wrongType(this.range.type, v);
    }
    if (this.rows >= this.capacity) this.grow();
    this.data[this.rows++] = v;
  }
}

/**
 * int64 values arrive as numbers, or as bigint when beyond 2^53. Safe integers are
 * kept as doubles (no BigInt made per value); the first value that is not switches
 * the column to a BigInt64Array for good.
 */
class Int64Builder extends ColumnBuilder {
  private doubles: Float64Array | undefined = new Float64Array(INITIAL_CAPACITY);
  private bigints: BigInt64Array | undefined;

  append(v: unknown): void {
    if (this.rows >= this.capacity) this.grow();
    const doubles = this.doubles;
    if (doubles !== undefined && typeof v === 'number' && Number.isSafeInteger(v)) {
      doubles[this.rows++] = v;
      return;
    }
    let big: bigint;
    if (typeof v === 'bigint') big = v;
    else if (typeof v === 'number' && Number.isInteger(v)) big = BigInt(v);
    else throw this.wrongType('a 64-bit integer', v);
    if (big < INT64_MIN || big > INT64_MAX) {
      throw new RowError(`column '${this.name}': ${big} is out of the 64-bit integer range`);
    }
    (this.bigints ?? this.toBigInts())[this.rows++] = big;
  }

  get bytes(): number {
    const data = this.doubles ?? this.bigints;
    return (data?.byteLength ?? 0) + (this.nulls?.byteLength ?? 0);
  }

  take(): FlatColumnData {
    const values = (this.doubles ?? this.bigints) as Float64Array | BigInt64Array;
    return { ...this.common(), kind: 'int64', values: values.subarray(0, this.rows) };
  }

  values(): unknown[] {
    const out = new Array<unknown>(this.rows);
    const data = (this.doubles ?? this.bigints) as Float64Array | BigInt64Array;
    for (let i = 0; i < this.rows; i++) out[i] = this.isNull(i) ? null : data[i];
    return out;
  }

  protected skip(): void {
    if (this.doubles !== undefined) this.doubles[this.rows] = 0;
    else (this.bigints as BigInt64Array)[this.rows] = 0n;
  }

  protected override grow(): void {
    super.grow();
    if (this.doubles !== undefined) this.doubles = resized(this.doubles, this.capacity);
    else this.bigints = resized(this.bigints as BigInt64Array, this.capacity);
  }

  private toBigInts(): BigInt64Array {
    const bigints = new BigInt64Array(this.capacity);
    const doubles = this.doubles as Float64Array;
    for (let i = 0; i < this.rows; i++) bigints[i] = BigInt(doubles[i] as number);
    this.doubles = undefined;
    this.bigints = bigints;
    return bigints;
  }
}

class FloatBuilder extends FixedWidthBuilder<Float32Array> {
  constructor(name: string, optional: boolean) {
    super(name, optional, 'float', (n) => new Float32Array(n));
  }

  append(v: unknown): void {
    if (typeof v !== 'number') throw this.wrongType('a number', v);
    if (this.rows >= this.capacity) this.grow();
    this.data[this.rows++] = v;
  }
}

class DoubleBuilder extends FixedWidthBuilder<Float64Array> {
  constructor(name: string, optional: boolean) {
    super(name, optional, 'double', (n) => new Float64Array(n));
  }

  append(v: unknown): void {
    if (typeof v !== 'number') throw this.wrongType('a number', v);
    if (this.rows >= this.capacity) this.grow();
    this.data[this.rows++] = v;
  }
}

class BooleanBuilder extends FixedWidthBuilder<Uint8Array> {
  constructor(name: string, optional: boolean) {
    super(name, optional, 'boolean', (n) => new Uint8Array(n));
  }

  append(v: unknown): void {
    if (typeof v !== 'boolean') throw this.wrongType('a boolean', v);
    if (this.rows >= this.capacity) this.grow();
    this.data[this.rows++] = v ? 1 : 0;
  }

  protected override jsValue(stored: number): unknown {
    return stored === 1;
  }
}

/** Growing byte strings: a byte buffer and an offset per entry (offsets[0] = 0). */
class ByteStringsBuilder {
  data: Buffer = Buffer.allocUnsafe(16 * 1024);
  offsets = new Int32Array(INITIAL_CAPACITY + 1);
  count = 0;

  get end(): number {
    return this.offsets[this.count] as number;
  }

  addString(s: string): void {
    const end = this.end;
    // At most 3 UTF-8 bytes per UTF-16 unit.
    if (end + s.length * 3 > this.data.length) this.growData(end + s.length * 3);
    this.push(end + this.data.write(s, end));
  }

  addBytes(b: Uint8Array): void {
    const end = this.end;
    if (end + b.length > this.data.length) this.growData(end + b.length);
    this.data.set(b, end);
    this.push(end + b.length);
  }

  addEmpty(): void {
    this.push(this.end);
  }

  truncate(count: number): void {
    this.count = count;
  }

  get bytes(): number {
    return this.data.length + this.offsets.byteLength;
  }

  take(): ByteStrings {
    const end = this.end;
    // Views of the used part: the whole buffers go to the encoder thread by transfer.
    return { data: this.data.subarray(0, end), offsets: this.offsets.subarray(0, this.count + 1) };
  }

  /** Entry i as a Buffer view (valid until the next add). */
  entry(i: number): Buffer {
    return this.data.subarray(this.offsets[i] as number, this.offsets[i + 1] as number);
  }

  private push(end: number): void {
    if (this.count + 1 >= this.offsets.length) {
      this.offsets = resized(this.offsets, this.offsets.length * 2);
    }
    this.offsets[++this.count] = end;
  }

  private growData(needed: number): void {
    const next = Buffer.allocUnsafe(Math.max(this.data.length * 2, needed));
    this.data.copy(next, 0, 0, this.end);
    this.data = next;
  }
}

/**
 * Strings: dictionary indices while the dictionary is small, then plain UTF-8 (see
 * the file comment). Dictionary entries are in order of first appearance.
 */
class StringBuilder extends ColumnBuilder {
  private index: Map<string, number> | undefined = new Map();
  private entries: string[] = [];
  private dictionaryBytes = 0;
  private indices: Int32Array | undefined = new Int32Array(INITIAL_CAPACITY);
  private plain: ByteStringsBuilder | undefined;

  append(v: unknown): void {
    if (typeof v !== 'string') throw this.wrongType('a string', v);
    if (this.rows >= this.capacity) this.grow();
    const index = this.index;
    if (index !== undefined) {
      let i = index.get(v);
      if (i === undefined) {
        i = this.entries.length;
        const bytes = Buffer.byteLength(v);
        if (i >= DICTIONARY_MAX_ENTRIES || this.dictionaryBytes + bytes > DICTIONARY_MAX_BYTES) {
          this.toPlain().addString(v);
          this.rows++;
          return;
        }
        index.set(v, i);
        this.entries.push(v);
        this.dictionaryBytes += bytes;
      }
      (this.indices as Int32Array)[this.rows++] = i;
      return;
    }
    (this.plain as ByteStringsBuilder).addString(v);
    this.rows++;
  }

  override truncate(rows: number): void {
    super.truncate(rows);
    this.plain?.truncate(rows);
  }

  get bytes(): number {
    const nulls = this.nulls?.byteLength ?? 0;
    if (this.plain !== undefined) return this.plain.bytes + nulls;
    // Map entry and string header: a rough constant per distinct value.
    return (
      (this.indices as Int32Array).byteLength +
      this.entries.length * 80 +
      this.dictionaryBytes * 2 +
      nulls
    );
  }

  take(): FlatColumnData {
    if (this.plain !== undefined) {
      return { ...this.common(), kind: 'plain', strings: this.plain.take() };
    }
    const dictionary = new ByteStringsBuilder();
    for (const s of this.entries) dictionary.addString(s);
    return {
      ...this.common(),
      kind: 'dictionary',
      indices: (this.indices as Int32Array).subarray(0, this.rows),
      dictionary: dictionary.take(),
    };
  }

  values(): unknown[] {
    const out = new Array<unknown>(this.rows);
    for (let i = 0; i < this.rows; i++) {
      out[i] = this.isNull(i)
        ? null
        : this.plain !== undefined
          ? this.plain.entry(i).toString('utf8')
          : this.entries[(this.indices as Int32Array)[i] as number];
    }
    return out;
  }

  protected skip(): void {
    if (this.plain !== undefined) this.plain.addEmpty();
    else (this.indices as Int32Array)[this.rows] = 0;
  }

  protected override grow(): void {
    super.grow();
    if (this.indices !== undefined) this.indices = resized(this.indices, this.capacity);
  }

  /** Switch to plain bytes for good: every buffered row written out as UTF-8. */
  private toPlain(): ByteStringsBuilder {
    const plain = new ByteStringsBuilder();
    const indices = this.indices as Int32Array;
    for (let i = 0; i < this.rows; i++) {
      if (this.isNull(i)) plain.addEmpty();
      else plain.addString(this.entries[indices[i] as number] as string);
    }
    this.plain = plain;
    this.index = undefined;
    this.entries = [];
    this.indices = undefined;
    return plain;
  }
}

class BytesBuilder extends ColumnBuilder {
  protected readonly plain = new ByteStringsBuilder();

  append(v: unknown): void {
    if (!(v instanceof Uint8Array)) throw this.wrongType('bytes', v);
    if (this.rows >= this.capacity) this.grow();
    this.plain.addBytes(v);
    this.rows++;
  }

  override truncate(rows: number): void {
    super.truncate(rows);
    this.plain.truncate(rows);
  }

  get bytes(): number {
    return this.plain.bytes + (this.nulls?.byteLength ?? 0);
  }

  take(): FlatColumnData {
    return { ...this.common(), kind: 'plain', strings: this.plain.take() };
  }

  values(): unknown[] {
    const out = new Array<unknown>(this.rows);
    for (let i = 0; i < this.rows; i++) {
      out[i] = this.isNull(i) ? null : new Uint8Array(this.plain.entry(i));
    }
    return out;
  }

  protected skip(): void {
    this.plain.addEmpty();
  }
}

/**
 * Decimal: the unscaled value as big-endian two's complement (Parquet's DECIMAL on
 * BYTE_ARRAY). Connect gives those bytes (a bigint is taken too); they are written in
 * their minimal form, as BigInteger.toByteArray makes them, so a value padded with
 * sign bytes reads the same everywhere.
 */
class DecimalBuilder extends BytesBuilder {
  override append(v: unknown): void {
    let bytes: Uint8Array;
    if (v instanceof Uint8Array) bytes = minimalTwosComplement(v);
    else if (typeof v === 'bigint') bytes = unscaledToBytes(v);
    else throw this.wrongType('a Decimal (unscaled bytes)', v);
    super.append(bytes);
  }
}

const ZERO_BYTE = new Uint8Array([0]);

/** Two's-complement bytes without redundant leading sign bytes ([] reads as 0). */
function minimalTwosComplement(b: Uint8Array): Uint8Array {
  if (b.length === 0) return ZERO_BYTE;
  let i = 0;
  while (
    i < b.length - 1 &&
    ((b[i] === 0x00 && ((b[i + 1] as number) & 0x80) === 0) ||
      (b[i] === 0xff && ((b[i + 1] as number) & 0x80) !== 0))
  ) {
    i++;
  }
  return i === 0 ? b : b.subarray(i);
}

/** ZonedTimestamp text as epoch µs (TIMESTAMP(MICROS, UTC)). */
class ZonedTimestampBuilder extends Int64Builder {
  override append(v: unknown): void {
    super.append(zonedTimestampMicros(v, this.name));
  }
}

/** ZonedTime text as µs since midnight UTC (TIME(MICROS, UTC)). */
class ZonedTimeBuilder extends Int64Builder {
  override append(v: unknown): void {
    super.append(zonedTimeMicros(v, this.name));
  }
}

/** Uuid text as its 16 bytes (FIXED_LEN_BYTE_ARRAY(16) UUID). */
class UuidBuilder extends BytesBuilder {
  override append(v: unknown): void {
    super.append(uuidBytes(v, this.name));
  }
}

/** VariableScaleDecimal {scale, value} rescaled to the column's scale (DECIMAL(38, s)). */
class VariableDecimalBuilder extends DecimalBuilder {
  constructor(
    name: string,
    optional: boolean,
    private readonly scale: number,
  ) {
    super(name, optional);
  }

  override append(v: unknown): void {
    super.append(
      v instanceof Uint8Array || typeof v === 'bigint'
        ? v
        : variableScaleUnscaled(v, this.scale, this.name),
    );
  }
}

/** VariableScaleDecimal {scale, value} as the nearest double. */
class VariableDoubleBuilder extends DoubleBuilder {
  override append(v: unknown): void {
    super.append(typeof v === 'number' ? v : variableScaleDouble(v, this.name));
  }
}

/**
 * Record batch v2 (magic 2): reading, validating, stamping and writing batches in
 * place, in the bytes exactly as they travel on the wire and sit in a segment file.
 *
 * Layout (big-endian, 61-byte header, see shared/KAFKA-CLIENTS.md):
 *
 *   0 baseOffset i64 | 8 batchLength i32 | 12 partitionLeaderEpoch i32 | 16 magic i8
 *   17 crc u32 | 21 attributes i16 | 23 lastOffsetDelta i32 | 27 baseTimestamp i64
 *   35 maxTimestamp i64 | 43 producerId i64 | 51 producerEpoch i16 | 53 baseSequence i32
 *   57 recordCount i32 | 61 records (compressed as one block when the codec is not 0)
 *
 * batchLength counts the bytes after itself, so a batch takes 12 + batchLength bytes.
 * The CRC-32C covers attributes to the end: assigning the base offset needs no new
 * CRC, stamping LogAppendTime (attributes + maxTimestamp) does.
 *
 * Offsets and timestamps are kept as JS numbers: offsets stay below 2^53 in any log
 * this broker can hold, and millisecond timestamps do too. Reading them as two
 * 32-bit halves avoids BigInt on the append path.
 *
 * Errors are values of one type, CorruptRecordError, whose `reason` says what was
 * wrong; hot paths return them instead of throwing (checkBatch), decoders throw them.
 */
import { CompressionCodec, CompressionError, compress, decompress } from './compression.ts';
import { crc32c } from './crc32c.ts';

export const BASE_OFFSET = 0;
export const BATCH_LENGTH = 8;
export const PARTITION_LEADER_EPOCH = 12;
export const MAGIC = 16;
export const CRC = 17;
export const ATTRIBUTES = 21;
export const LAST_OFFSET_DELTA = 23;
export const BASE_TIMESTAMP = 27;
export const MAX_TIMESTAMP = 35;
export const PRODUCER_ID = 43;
export const PRODUCER_EPOCH = 51;
export const BASE_SEQUENCE = 53;
export const RECORD_COUNT = 57;
export const RECORDS = 61;
/** baseOffset + batchLength: the bytes of a batch not counted by batchLength. */
export const LOG_OVERHEAD = 12;
export const BATCH_HEADER_BYTES = RECORDS;

export const ATTR_CODEC_MASK = 0x07;
export const ATTR_LOG_APPEND_TIME = 0x08;
export const ATTR_TRANSACTIONAL = 0x10;
export const ATTR_CONTROL = 0x20;
export const ATTR_DELETE_HORIZON = 0x40;

export type CorruptReason =
  | 'truncated'
  | 'invalid-length'
  | 'invalid-magic'
  | 'crc-mismatch'
  | 'invalid-records'
  | 'invalid-compression';

export class CorruptRecordError extends Error {
  override readonly name = 'CorruptRecordError';
  constructor(
    readonly reason: CorruptReason,
    message: string,
    /** Byte position of the batch in the buffer it was read from. */
    readonly position = -1,
  ) {
    super(message);
  }
}

const TWO_32 = 0x1_0000_0000;

export function readInt64(buf: Buffer, pos: number): number {
  return buf.readInt32BE(pos) * TWO_32 + buf.readUInt32BE(pos + 4);
}

export function writeInt64(buf: Buffer, pos: number, value: number): void {
  const hi = Math.floor(value / TWO_32);
  buf.writeInt32BE(hi, pos);
  buf.writeUInt32BE(value - hi * TWO_32, pos + 4);
}

export const batchBaseOffset = (buf: Buffer, pos: number): number =>
  readInt64(buf, pos + BASE_OFFSET);
/** Total bytes of the batch at `pos`, header included. */
export const batchSize = (buf: Buffer, pos: number): number =>
  LOG_OVERHEAD + buf.readInt32BE(pos + BATCH_LENGTH);
export const batchLastOffsetDelta = (buf: Buffer, pos: number): number =>
  buf.readInt32BE(pos + LAST_OFFSET_DELTA);
export const batchLastOffset = (buf: Buffer, pos: number): number =>
  batchBaseOffset(buf, pos) + batchLastOffsetDelta(buf, pos);
export const batchAttributes = (buf: Buffer, pos: number): number =>
  buf.readInt16BE(pos + ATTRIBUTES);
export const batchMaxTimestamp = (buf: Buffer, pos: number): number =>
  readInt64(buf, pos + MAX_TIMESTAMP);
export const batchRecordCount = (buf: Buffer, pos: number): number =>
  buf.readInt32BE(pos + RECORD_COUNT);

export interface BatchHeader {
  baseOffset: number;
  /** Bytes after the batchLength field. */
  batchLength: number;
  partitionLeaderEpoch: number;
  magic: number;
  crc: number;
  attributes: number;
  codec: number;
  logAppendTime: boolean;
  transactional: boolean;
  control: boolean;
  hasDeleteHorizon: boolean;
  lastOffsetDelta: number;
  baseTimestamp: number;
  maxTimestamp: number;
  producerId: number;
  producerEpoch: number;
  baseSequence: number;
  recordCount: number;
}

export function readBatchHeader(buf: Buffer, pos: number): BatchHeader {
  const attributes = buf.readInt16BE(pos + ATTRIBUTES);
  return {
    baseOffset: readInt64(buf, pos + BASE_OFFSET),
    batchLength: buf.readInt32BE(pos + BATCH_LENGTH),
    partitionLeaderEpoch: buf.readInt32BE(pos + PARTITION_LEADER_EPOCH),
    magic: buf.readInt8(pos + MAGIC),
    crc: buf.readUInt32BE(pos + CRC),
    attributes,
    codec: attributes & ATTR_CODEC_MASK,
    logAppendTime: (attributes & ATTR_LOG_APPEND_TIME) !== 0,
    transactional: (attributes & ATTR_TRANSACTIONAL) !== 0,
    control: (attributes & ATTR_CONTROL) !== 0,
    hasDeleteHorizon: (attributes & ATTR_DELETE_HORIZON) !== 0,
    lastOffsetDelta: buf.readInt32BE(pos + LAST_OFFSET_DELTA),
    baseTimestamp: readInt64(buf, pos + BASE_TIMESTAMP),
    maxTimestamp: readInt64(buf, pos + MAX_TIMESTAMP),
    producerId: readInt64(buf, pos + PRODUCER_ID),
    producerEpoch: buf.readInt16BE(pos + PRODUCER_EPOCH),
    baseSequence: buf.readInt32BE(pos + BASE_SEQUENCE),
    recordCount: buf.readInt32BE(pos + RECORD_COUNT),
  };
}

/**
 * Checks the batch starting at `pos` and ending no later than `end`: enough bytes
 * for the header, a batchLength that fits, magic 2, and (when `verifyCrc`) the
 * CRC-32C. Returns the batch's total size, or the error as a value so that a log
 * recovery scan or a produce validation pays no exception cost.
 */
export function checkBatch(
  buf: Buffer,
  pos: number,
  end: number,
  verifyCrc = true,
): number | CorruptRecordError {
  if (end - pos < LOG_OVERHEAD) {
    return new CorruptRecordError('truncated', `${end - pos} bytes cannot hold a batch`, pos);
  }
  const length = buf.readInt32BE(pos + BATCH_LENGTH);
  if (length < BATCH_HEADER_BYTES - LOG_OVERHEAD) {
    return new CorruptRecordError('invalid-length', `batch length ${length} is too small`, pos);
  }
  const size = LOG_OVERHEAD + length;
  if (pos + size > end) {
    return new CorruptRecordError(
      'truncated',
      `batch of ${size} bytes but only ${end - pos} remain`,
      pos,
    );
  }
  const magic = buf.readInt8(pos + MAGIC);
  if (magic !== 2) {
    return new CorruptRecordError(
      'invalid-magic',
      `magic ${magic}, only v2 batches are supported`,
      pos,
    );
  }
  if (buf.readInt32BE(pos + LAST_OFFSET_DELTA) < 0 || buf.readInt32BE(pos + RECORD_COUNT) < 0) {
    return new CorruptRecordError(
      'invalid-records',
      'negative last offset delta or record count',
      pos,
    );
  }
  if (verifyCrc) {
    const stored = buf.readUInt32BE(pos + CRC);
    const computed = crc32c(buf.subarray(pos + ATTRIBUTES, pos + size));
    if (stored !== computed) {
      return new CorruptRecordError(
        'crc-mismatch',
        `CRC-32C ${computed.toString(16)} does not match stored ${stored.toString(16)}`,
        pos,
      );
    }
  }
  return size;
}

/** Start position and size of each batch in [start, end); throws on the first bad one. */
export function* iterateBatches(
  buf: Buffer,
  start = 0,
  end = buf.length,
  verifyCrc = false,
): Generator<{ position: number; size: number }> {
  let pos = start;
  while (pos < end) {
    const size = checkBatch(buf, pos, end, verifyCrc);
    if (typeof size !== 'number') throw size;
    yield { position: pos, size };
    pos += size;
  }
}

/** Sets the base offset in place. The CRC does not cover it, so it stays valid. */
export function setBaseOffset(buf: Buffer, pos: number, offset: number): void {
  writeInt64(buf, pos + BASE_OFFSET, offset);
}

/** Marks the batch as LogAppendTime with `timestamp` as its maxTimestamp, and re-CRCs. */
export function stampLogAppendTime(buf: Buffer, pos: number, timestamp: number): void {
  const attributes = buf.readInt16BE(pos + ATTRIBUTES) | ATTR_LOG_APPEND_TIME;
  buf.writeInt16BE(attributes, pos + ATTRIBUTES);
  writeInt64(buf, pos + MAX_TIMESTAMP, timestamp);
  rewriteCrc(buf, pos);
}

export function rewriteCrc(buf: Buffer, pos: number): void {
  const size = batchSize(buf, pos);
  buf.writeUInt32BE(crc32c(buf.subarray(pos + ATTRIBUTES, pos + size)), pos + CRC);
}

export interface RecordHeader {
  key: string;
  value: Buffer | null;
}

export interface Record {
  offset: number;
  /** CreateTime of the record, or the batch's maxTimestamp for LogAppendTime batches. */
  timestamp: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: RecordHeader[];
}

/** The records section of the batch at `pos`, decompressed when needed. */
export function recordsPayload(buf: Buffer, pos: number): Buffer {
  const size = batchSize(buf, pos);
  const body = buf.subarray(pos + RECORDS, pos + size);
  const codec = batchAttributes(buf, pos) & ATTR_CODEC_MASK;
  if (codec === 0) return body;
  try {
    return decompress(codec, body);
  } catch (e) {
    if (e instanceof CompressionError) {
      throw new CorruptRecordError('invalid-compression', e.message, pos);
    }
    throw e;
  }
}

/** The headers of every record without any: one frozen array, not one per record. */
const NO_HEADERS = Object.freeze([]) as unknown as RecordHeader[];

/**
 * Decodes every record of the batch at `pos`; throws CorruptRecordError if malformed.
 * A record without headers shares one frozen empty array: do not push onto it.
 */
export function decodeRecords(buf: Buffer, pos: number): Record[] {
  const header = readBatchHeader(buf, pos);
  const reader = new VarReader(recordsPayload(buf, pos), pos);
  const records: Record[] = [];
  for (let i = 0; i < header.recordCount; i++) {
    const length = reader.varint();
    const start = reader.pos;
    reader.skip(1); // record attributes: unused by v2
    const timestampDelta = reader.varlong();
    const offsetDelta = reader.varint();
    const key = reader.bytes();
    const value = reader.bytes();
    const headerCount = reader.varint();
    if (headerCount < 0) reader.fail('negative header count');
    const headers: RecordHeader[] = headerCount === 0 ? NO_HEADERS : [];
    for (let h = 0; h < headerCount; h++) {
      const hk = reader.bytes();
      if (hk === null) reader.fail('null header key');
      headers.push({ key: (hk as Buffer).toString('utf8'), value: reader.bytes() });
    }
    if (reader.pos - start !== length)
      reader.fail(`record length ${length} does not match its fields`);
    records.push({
      offset: header.baseOffset + offsetDelta,
      timestamp: header.logAppendTime ? header.maxTimestamp : header.baseTimestamp + timestampDelta,
      key,
      value,
      headers,
    });
  }
  if (reader.pos !== reader.end) reader.fail('bytes after the last record');
  return records;
}

export interface RecordInput {
  /** Offset relative to the batch's baseOffset; defaults to the record's index. */
  readonly offsetDelta?: number;
  /** Null: the batch's defaultTimestamp. */
  readonly timestamp: number | null;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers?: readonly RecordHeader[];
}

export interface BatchInput {
  baseOffset?: number;
  records: readonly RecordInput[];
  /** The timestamp of records whose own is null (a producer's send time). */
  defaultTimestamp?: number;
  codec?: CompressionCodec;
  /** KIP-390's level for `codec`; undefined: the codec's default. */
  compressionLevel?: number;
  partitionLeaderEpoch?: number;
  producerId?: number;
  producerEpoch?: number;
  baseSequence?: number;
  transactional?: boolean;
  control?: boolean;
  logAppendTime?: boolean;
  /** Keeps the original batch's offset range when records were removed (cleaner). */
  lastOffsetDelta?: number;
  /** KIP-534: baseTimestamp holds the time after which tombstones may be dropped. */
  deleteHorizon?: number;
  /** Used when there are no records (and for LogAppendTime batches). */
  maxTimestamp?: number;
  /**
   * Where the finished batch is written: a buffer of exactly `size` bytes. Default: a
   * new allocation. A producer passes buffers it reuses once a batch is acknowledged.
   */
  allocate?: (size: number) => Buffer;
}

const allocateBatch = (size: number): Buffer => Buffer.allocUnsafe(size);

/**
 * Encodes a complete v2 batch with a valid CRC. Two passes over the records: the first
 * sizes every record, the second writes them straight into the batch's one buffer (or
 * into the block to compress), so a batch of thousands of records allocates once.
 */
export function encodeBatch(input: BatchInput): Buffer {
  const records = input.records;
  const n = records.length;
  const defaultTimestamp = input.defaultTimestamp ?? -1;
  let minTs = Number.POSITIVE_INFINITY;
  let maxTs = -1;
  for (let i = 0; i < n; i++) {
    const ts = records[i]!.timestamp ?? defaultTimestamp;
    if (ts < minTs) minTs = ts;
    if (ts > maxTs) maxTs = ts;
  }
  if (n === 0) minTs = input.maxTimestamp ?? -1;
  const baseTimestamp = input.deleteHorizon ?? minTs;

  // Pass 1: the size of each record body (everything after its length varint).
  const bodySizes = new Array<number>(n);
  let payloadLength = 0;
  let lastOffsetDelta = n === 0 ? 0 : -1;
  for (let i = 0; i < n; i++) {
    const r = records[i]!;
    const delta = r.offsetDelta ?? i;
    if (delta > lastOffsetDelta) lastOffsetDelta = delta;
    let size =
      1 + zigzagSize((r.timestamp ?? defaultTimestamp) - baseTimestamp) + zigzagSize(delta);
    size += r.key === null ? 1 : zigzagSize(r.key.length) + r.key.length;
    size += r.value === null ? 1 : zigzagSize(r.value.length) + r.value.length;
    const headers = r.headers;
    if (headers === undefined || headers.length === 0) size += 1;
    else {
      size += zigzagSize(headers.length);
      for (const h of headers) {
        const keyLength = Buffer.byteLength(h.key, 'utf8');
        size += zigzagSize(keyLength) + keyLength;
        size += h.value === null ? 1 : zigzagSize(h.value.length) + h.value.length;
      }
    }
    bodySizes[i] = size;
    payloadLength += zigzagSize(size) + size;
  }
  if (input.lastOffsetDelta !== undefined) lastOffsetDelta = input.lastOffsetDelta;

  // Pass 2: write the records.
  const codec = input.codec ?? CompressionCodec.none;
  const allocate = input.allocate ?? allocateBatch;
  const buf =
    codec === CompressionCodec.none
      ? allocate(RECORDS + payloadLength)
      : Buffer.allocUnsafe(payloadLength);
  let pos = codec === CompressionCodec.none ? RECORDS : 0;
  for (let i = 0; i < n; i++) {
    const r = records[i]!;
    pos = writeZigzag(buf, pos, bodySizes[i]!);
    buf[pos++] = 0;
    pos = writeZigzag(buf, pos, (r.timestamp ?? defaultTimestamp) - baseTimestamp);
    pos = writeZigzag(buf, pos, r.offsetDelta ?? i);
    pos = writeBytes(buf, pos, r.key);
    pos = writeBytes(buf, pos, r.value);
    const headers = r.headers;
    if (headers === undefined || headers.length === 0) buf[pos++] = 0;
    else {
      pos = writeZigzag(buf, pos, headers.length);
      for (const h of headers) {
        const keyLength = Buffer.byteLength(h.key, 'utf8');
        pos = writeZigzag(buf, pos, keyLength);
        pos += buf.write(h.key, pos, keyLength, 'utf8');
        pos = writeBytes(buf, pos, h.value);
      }
    }
  }

  let out = buf;
  if (codec !== CompressionCodec.none) {
    const payload = compress(codec, buf, input.compressionLevel);
    out = allocate(RECORDS + payload.length);
    payload.copy(out, RECORDS);
  }
  let attributes: number = codec;
  if (input.logAppendTime) attributes |= ATTR_LOG_APPEND_TIME;
  if (input.transactional) attributes |= ATTR_TRANSACTIONAL;
  if (input.control) attributes |= ATTR_CONTROL;
  if (input.deleteHorizon !== undefined) attributes |= ATTR_DELETE_HORIZON;
  writeInt64(out, BASE_OFFSET, input.baseOffset ?? 0);
  out.writeInt32BE(out.length - LOG_OVERHEAD, BATCH_LENGTH);
  out.writeInt32BE(input.partitionLeaderEpoch ?? -1, PARTITION_LEADER_EPOCH);
  out.writeInt8(2, MAGIC);
  out.writeUInt32BE(0, CRC);
  out.writeInt16BE(attributes, ATTRIBUTES);
  out.writeInt32BE(lastOffsetDelta, LAST_OFFSET_DELTA);
  writeInt64(out, BASE_TIMESTAMP, baseTimestamp);
  writeInt64(
    out,
    MAX_TIMESTAMP,
    input.logAppendTime && input.maxTimestamp !== undefined
      ? input.maxTimestamp
      : n === 0
        ? (input.maxTimestamp ?? -1)
        : maxTs,
  );
  writeInt64(out, PRODUCER_ID, input.producerId ?? -1);
  out.writeInt16BE(input.producerEpoch ?? -1, PRODUCER_EPOCH);
  out.writeInt32BE(input.baseSequence ?? -1, BASE_SEQUENCE);
  out.writeInt32BE(n, RECORD_COUNT);
  rewriteCrc(out, 0);
  return out;
}

/** Bytes of a zigzag varint/varlong (values are safe integers). */
function zigzagSize(v: number): number {
  let u = v >= 0 ? v * 2 : -v * 2 - 1;
  let size = 1;
  while (u >= 128) {
    u = Math.floor(u / 128);
    size++;
  }
  return size;
}

function writeZigzag(buf: Buffer, pos: number, v: number): number {
  let u = v >= 0 ? v * 2 : -v * 2 - 1;
  while (u >= 128) {
    buf[pos++] = (u % 128) | 0x80;
    u = Math.floor(u / 128);
  }
  buf[pos++] = u;
  return pos;
}

function writeBytes(buf: Buffer, pos: number, b: Buffer | null): number {
  if (b === null) {
    buf[pos] = 1; // zigzag(-1)
    return pos + 1;
  }
  pos = writeZigzag(buf, pos, b.length);
  return pos + b.copy(buf, pos);
}

/** Control record key (version i16, type i16): 0 abort, 1 commit. */
export function controlRecordType(key: Buffer | null): number | undefined {
  if (key === null || key.length < 4) return undefined;
  return key.readInt16BE(2);
}

// ---- zigzag varints -----------------------------------------------------------------

class VarReader {
  pos = 0;
  readonly end: number;
  constructor(
    private readonly buf: Buffer,
    private readonly batchPosition: number,
  ) {
    this.end = buf.length;
  }

  fail(message: string): never {
    throw new CorruptRecordError('invalid-records', message, this.batchPosition);
  }

  skip(n: number): void {
    if (this.pos + n > this.end) this.fail('record overruns the batch');
    this.pos += n;
  }

  /** Unsigned LEB128 of up to 10 bytes as a JS number (exact below 2^53). */
  private unsigned(maxBytes: number): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < maxBytes; i++) {
      if (this.pos >= this.end) this.fail('varint overruns the batch');
      const b = this.buf[this.pos++];
      result += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) return result;
      scale *= 128;
    }
    this.fail('varint too long');
  }

  varint(): number {
    const u = this.unsigned(5);
    return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
  }

  varlong(): number {
    const u = this.unsigned(10);
    return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
  }

  bytes(): Buffer | null {
    const len = this.varint();
    if (len < 0) return null;
    if (this.pos + len > this.end) this.fail('field overruns the batch');
    const out = this.buf.subarray(this.pos, this.pos + len);
    this.pos += len;
    return out;
  }
}

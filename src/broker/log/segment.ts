/**
 * One segment of a partition log: `<20-digit base offset>.log` plus its sparse
 * `.index` and `.timeindex` (see offset-index.ts and time-index.ts) and its
 * aborted-transaction index `.txnindex` (transaction-index.ts; absent when no
 * transaction aborted in it). Recovery keeps the aborted-transaction entries whose
 * markers survived and drops the rest; entries are added by the partition's producer
 * state when it sees an ABORT marker (producer-state-store.ts).
 *
 * Format of the .log: record batches v2 back to back, byte for byte as producers
 * sent them except for the assigned base offset (and, on LogAppendTime topics, the
 * stamped attributes/maxTimestamp/CRC). No header, no footer: a Fetch sends ranges
 * of this file as they are.
 *
 * Invariants: every batch in the file is whole and CRC-valid (recovery truncates
 * anything after the first batch that is not); base offsets strictly increase and
 * the first is >= the segment's base offset; relative offsets fit in u32 (the log
 * rolls before they would not). `size` is the number of valid bytes: readers never
 * see bytes beyond it.
 *
 * Crash behaviour: appends are plain writes that reach the page cache at once and
 * the disk at the next fsync (flush policy). After a crash, bytes after the last
 * fsync may be torn: PartitionLog recovery calls `recover`, which re-validates the
 * tail batch by batch, truncates at the first bad byte and rebuilds the indexes.
 *
 * Preallocation (topic config `preallocate`): a new segment's file is extended to
 * segment.bytes at once, as Kafka's FileRecords.openChannel does with
 * RandomAccessFile.setLength (ftruncate: a sparse extension on most filesystems, so
 * it reserves no blocks; what it buys is fewer size updates of the file's metadata).
 * The file then ends in zeros past `size`. `trim` cuts the file back to `size` when
 * the segment stops being active (roll, close), and recovery treats a zero-filled
 * tail as the end of the log, not as corruption: a batch never starts with a zero
 * length, so the first zero header after the valid batches is where writing stopped.
 *
 * I/O is synchronous on purpose: every call runs on the broker thread against the
 * page cache (a produce is one write(2), a fetch one pread(2) of up to max.bytes),
 * so a reader always sees whole batches and a consistent segment list without locks,
 * and a deleted segment is never read by a request still in flight. Only fsync,
 * which waits for the disk, runs off-thread (fsyncAsync).
 */
import {
  closeSync,
  existsSync,
  fstatSync,
  fsync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import {
  BATCH_HEADER_BYTES,
  BATCH_LENGTH,
  CorruptRecordError,
  checkBatch,
  decodeRecords,
  LAST_OFFSET_DELTA,
  LOG_OVERHEAD,
  MAGIC,
  readInt64,
} from '../../protocol/record-batch.ts';
import { CorruptIndexError } from './errors.ts';
import { OffsetIndex } from './offset-index.ts';
import { TimeIndex } from './time-index.ts';
import { TransactionIndex } from './transaction-index.ts';

export interface SegmentConfig {
  indexIntervalBytes: number;
  segmentIndexBytes: number;
}

/** A batch already validated and given its offsets, at `position` in an append buffer. */
export interface AppendedBatch {
  position: number;
  size: number;
  baseOffset: number;
  lastOffset: number;
  maxTimestamp: number;
}

export interface RecoveryResult {
  /** Bytes cut from a torn or corrupt tail (`reason` says why). */
  truncatedBytes: number;
  reason?: CorruptRecordError;
  /** Bytes cut from a zero-filled tail: the unused end of a preallocated file. */
  zeroTailBytes: number;
  batches: number;
}

/** Kafka's file naming: the base offset zero-padded to 20 digits. */
export function segmentFileName(baseOffset: number, suffix: string): string {
  return `${String(baseOffset).padStart(20, '0')}${suffix}`;
}

/**
 * The last offset of the valid prefix of a segment-format file (a cleaner's swap
 * file), by a header scan; `baseOffset - 1` when it holds no valid batch.
 */
export function lastOffsetInFile(path: string, baseOffset: number): number {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const header = Buffer.alloc(BATCH_HEADER_BYTES);
    let pos = 0;
    let last = baseOffset - 1;
    while (pos + BATCH_HEADER_BYTES <= size) {
      readSync(fd, header, 0, BATCH_HEADER_BYTES, pos);
      const batchBytes = LOG_OVERHEAD + header.readInt32BE(BATCH_LENGTH);
      if (
        batchBytes < BATCH_HEADER_BYTES ||
        pos + batchBytes > size ||
        header.readInt8(MAGIC) !== 2
      )
        break;
      last = readInt64(header, 0) + header.readInt32BE(LAST_OFFSET_DELTA);
      pos += batchBytes;
    }
    return last;
  } finally {
    closeSync(fd);
  }
}

/**
 * Lends the buffer a read fills: `length` bytes exactly, which the caller gives back
 * once nothing reads them (server/answer-buffers.ts for a Fetch).
 */
export interface ReadBuffers {
  lend(length: number): Buffer;
}

const EMPTY = Buffer.alloc(0);

/**
 * Whether `chunk` is zero from `at` (a batch boundary) to its end: the unused tail of
 * a preallocated file. No batch starts with zeros (its length is at least
 * BATCH_HEADER_BYTES - LOG_OVERHEAD). Only the chunk recovery already read is checked,
 * so a 1 GiB preallocated tail is not read through to its end.
 */
function isZeroTail(chunk: Buffer, at: number): boolean {
  for (let i = at; i < chunk.length; i++) if (chunk[i] !== 0) return false;
  return true;
}

/** Recovery reads the log in chunks this large: big enough to amortise the syscall. */
const RECOVERY_CHUNK_BYTES = 4 * 1024 * 1024;
/** Header scans read windows this large: covers several index intervals in one read. */
const SCAN_WINDOW_BYTES = 16 * 1024;

export class LogSegment {
  readonly logPath: string;
  readonly offsetIndex: OffsetIndex;
  readonly timeIndex: TimeIndex;
  readonly txnIndex: TransactionIndex;
  private txnIndexLoaded = false;
  private fd: number;
  /** Valid bytes of the .log. */
  size: number;
  /** Length of the .log file: `size`, or more while it is preallocated. */
  private fileLength: number;
  /**
   * Taken off segment.ms for this segment's time-based roll (segment.jitter.ms: Kafka
   * draws one per segment so that partitions created together do not all roll at once).
   */
  rollJitterMs = 0;
  /** Offset after the last batch, or the base offset when empty. */
  nextOffset: number;
  maxTimestamp = -1;
  offsetOfMaxTimestamp: number;
  /** When the segment.ms clock started: first batch's timestamp, or the clock at first append. */
  rollingBaseTime: number | undefined;
  /** Bytes written since the last fsync started. */
  unflushedBytes = 0;
  private bytesSinceIndexEntry = 0;
  private fsyncsInFlight = 0;
  private closed = false;
  private closeWhenIdle = false;
  private window = Buffer.alloc(SCAN_WINDOW_BYTES);
  private windowStart = 0;
  private windowLength = 0;

  private constructor(
    readonly dir: string,
    readonly baseOffset: number,
    private readonly config: SegmentConfig,
    fd: number,
  ) {
    this.logPath = join(dir, segmentFileName(baseOffset, '.log'));
    this.offsetIndex = new OffsetIndex(
      join(dir, segmentFileName(baseOffset, '.index')),
      baseOffset,
      config.segmentIndexBytes,
    );
    this.timeIndex = new TimeIndex(
      join(dir, segmentFileName(baseOffset, '.timeindex')),
      baseOffset,
      config.segmentIndexBytes,
    );
    this.txnIndex = new TransactionIndex(
      join(dir, segmentFileName(baseOffset, '.txnindex')),
      baseOffset,
    );
    this.fd = fd;
    this.size = fstatSync(fd).size;
    this.fileLength = this.size;
    this.nextOffset = baseOffset;
    this.offsetOfMaxTimestamp = baseOffset;
  }

  /**
   * Creates an empty segment (truncating any leftover file of the same name), its file
   * preallocated to `preallocateBytes` when that is above 0.
   */
  static create(
    dir: string,
    baseOffset: number,
    config: SegmentConfig,
    preallocateBytes = 0,
  ): LogSegment {
    const fd = openSync(join(dir, segmentFileName(baseOffset, '.log')), 'w+');
    const segment = new LogSegment(dir, baseOffset, config, fd);
    if (preallocateBytes > 0) {
      try {
        ftruncateSync(fd, preallocateBytes);
      } catch (e) {
        closeSync(fd);
        throw e;
      }
      segment.fileLength = preallocateBytes;
    }
    segment.offsetIndex.clear();
    segment.timeIndex.clear();
    segment.txnIndex.clear();
    segment.txnIndexLoaded = true;
    return segment;
  }

  /** Opens an existing segment without reading it; the caller loads or recovers it. */
  static open(dir: string, baseOffset: number, config: SegmentConfig): LogSegment {
    const fd = openSync(join(dir, segmentFileName(baseOffset, '.log')), 'r+');
    return new LogSegment(dir, baseOffset, config, fd);
  }

  get isEmpty(): boolean {
    return this.size === 0;
  }

  /**
   * Trusts the log up to `validBytes` (known flushed and valid) and loads the
   * indexes; then recovers whatever follows. `nextOffset` is the offset after the
   * batch ending at `validBytes`. Missing or insane indexes are rebuilt by a full
   * recovery of this segment. Returns what recovery cut, if anything.
   */
  loadTrusted(
    trustedBytes: number,
    knownNextOffset: number | undefined,
  ): RecoveryResult & { rebuiltIndex?: string } {
    let validBytes = trustedBytes;
    const rebuild = (why: string) => ({ ...this.recover(0, this.baseOffset), rebuiltIndex: why });
    if (validBytes > this.size) return rebuild('the log is shorter than checkpointed');
    try {
      this.offsetIndex.load(this.size);
    } catch (e) {
      if (e instanceof CorruptIndexError) return rebuild(e.message);
      throw e;
    }
    this.offsetIndex.truncateToPosition(validBytes);
    const fromIndex = this.offsetIndex.lastEntry();
    let nextOffset = knownNextOffset;
    if (nextOffset === undefined) {
      const scanned = this.scanNextOffset(fromIndex.position, validBytes, fromIndex.offset);
      if (scanned === undefined) return rebuild('an index entry does not point at a batch');
      // A zero tail (preallocated, its trim at roll lost in a crash): recovered below.
      ({ next: nextOffset, end: validBytes } = scanned);
    }
    try {
      // Entries past the trusted range may exist (written before a crash): drop them.
      this.timeIndex.load(Number.MAX_SAFE_INTEGER);
      this.timeIndex.truncateToOffset(nextOffset);
    } catch (e) {
      if (e instanceof CorruptIndexError) return rebuild(e.message);
      throw e;
    }
    this.nextOffset = nextOffset;
    const last = this.timeIndex.lastEntry();
    if (last) {
      this.maxTimestamp = last.timestamp;
      this.offsetOfMaxTimestamp = last.offset;
    }
    this.bytesSinceIndexEntry = validBytes - fromIndex.position;
    this.rollingBaseTime = this.firstBatchMaxTimestamp();
    if (validBytes === this.size) {
      if (!last && this.size > 0) this.scanMaxTimestamp();
      this.loadTxnIndexUpTo(nextOffset);
      return { truncatedBytes: 0, zeroTailBytes: 0, batches: 0 };
    }
    return this.recover(validBytes, nextOffset);
  }

  /**
   * Offset after the last batch in [from, end) by a header scan, and where the batches
   * end: before `end` only at a zero-filled tail. Undefined if a header is bad.
   */
  private scanNextOffset(
    from: number,
    end: number,
    expectedFirst: number,
  ): { next: number; end: number } | undefined {
    let pos = from;
    let next = expectedFirst;
    while (pos < end) {
      const at = this.header(pos);
      if (at === undefined) {
        // An index entry pointing into zeros names a batch that is not there: bad.
        if (pos === from && from > 0) return undefined;
        const rest = this.readAt(pos, Math.min(SCAN_WINDOW_BYTES, end - pos));
        return isZeroTail(rest, 0) ? { next, end: pos } : undefined;
      }
      const base = readInt64(this.window, at);
      if (pos === from && from > 0 && base !== expectedFirst) return undefined;
      next = base + this.window.readInt32BE(at + LAST_OFFSET_DELTA) + 1;
      pos += LOG_OVERHEAD + this.window.readInt32BE(at + BATCH_LENGTH);
    }
    return pos === end ? { next, end } : undefined;
  }

  /**
   * Validates batches from `fromPosition` (a batch boundary; `nextOffset` is the
   * offset expected after the batches before it), re-adding index entries, and
   * truncates the file at the first torn, CRC-failing or out-of-order batch, or at a
   * zero-filled tail (a preallocated file's unused end; see the header).
   */
  recover(fromPosition: number, nextOffset: number): RecoveryResult {
    if (fromPosition === 0) {
      this.offsetIndex.clear();
      this.timeIndex.clear();
      this.maxTimestamp = -1;
      this.offsetOfMaxTimestamp = this.baseOffset;
      this.bytesSinceIndexEntry = 0;
    }
    let pos = fromPosition;
    let expected = nextOffset;
    let chunk: Buffer = Buffer.alloc(0);
    let chunkStart = 0;
    let batches = 0;
    let reason: CorruptRecordError | undefined;
    let zeroTail = false;
    while (pos < this.size) {
      if (pos + Math.min(LOG_OVERHEAD, this.size - pos) > chunkStart + chunk.length) {
        chunk = this.readAt(pos, Math.min(RECOVERY_CHUNK_BYTES, this.size - pos));
        chunkStart = pos;
      }
      if (isZeroTail(chunk, pos - chunkStart)) {
        zeroTail = true;
        break;
      }
      if (this.size - pos < LOG_OVERHEAD) {
        reason = new CorruptRecordError('truncated', `${this.size - pos} trailing bytes`, pos);
        break;
      }
      let size = LOG_OVERHEAD + chunk.readInt32BE(pos - chunkStart + BATCH_LENGTH);
      if (
        size >= BATCH_HEADER_BYTES &&
        pos + size <= this.size &&
        pos + size > chunkStart + chunk.length
      ) {
        chunk = this.readAt(pos, Math.max(size, Math.min(RECOVERY_CHUNK_BYTES, this.size - pos)));
        chunkStart = pos;
      }
      const checked = checkBatch(chunk, pos - chunkStart, chunk.length, true);
      if (typeof checked !== 'number') {
        reason = checked;
        break;
      }
      size = checked;
      const at = pos - chunkStart;
      const baseOffset = readInt64(chunk, at);
      if (baseOffset < expected) {
        reason = new CorruptRecordError(
          'invalid-records',
          `base offset ${baseOffset} below ${expected}`,
          pos,
        );
        break;
      }
      const lastOffset = baseOffset + chunk.readInt32BE(at + LAST_OFFSET_DELTA);
      if (lastOffset - this.baseOffset > 0xffffffff) {
        reason = new CorruptRecordError(
          'invalid-records',
          `offset ${lastOffset} outside the segment`,
          pos,
        );
        break;
      }
      this.indexBatch(pos, size, baseOffset, lastOffset, readInt64(chunk, at + 35));
      expected = lastOffset + 1;
      pos += size;
      batches++;
    }
    const cut = this.size - pos;
    if (cut > 0) this.truncateTo(pos);
    this.nextOffset = expected;
    if (this.rollingBaseTime === undefined && this.size > 0)
      this.rollingBaseTime = this.firstBatchMaxTimestamp();
    this.loadTxnIndexUpTo(expected);
    return zeroTail
      ? { truncatedBytes: 0, zeroTailBytes: cut, batches }
      : { truncatedBytes: cut, reason, zeroTailBytes: 0, batches };
  }

  /** Loads the aborted-transaction index once, keeping only entries whose marker is below `nextOffset`. */
  private loadTxnIndexUpTo(nextOffset: number): void {
    if (!this.txnIndexLoaded) {
      this.txnIndex.load();
      this.txnIndexLoaded = true;
    }
    this.txnIndex.truncateTo(nextOffset);
  }

  /**
   * Writes batches already validated and offset-stamped, in one write(2). When a write
   * fails (ENOSPC after a short write, EIO) the file is cut back to `size` before the
   * error is rethrown, and nothing else changed: no torn batch is left for recovery, a
   * reader or the next append (which may be shorter) to find.
   */
  append(buf: Buffer, batches: AppendedBatch[], now: number): void {
    const startPosition = this.size;
    let written = 0;
    try {
      while (written < buf.length) {
        written += writeSync(this.fd, buf, written, buf.length - written, startPosition + written);
      }
    } catch (e) {
      if (written > 0) this.cutFailedAppend(startPosition);
      throw e;
    }
    for (const b of batches) {
      this.indexBatch(
        startPosition + b.position,
        b.size,
        b.baseOffset,
        b.lastOffset,
        b.maxTimestamp,
      );
    }
    if (this.rollingBaseTime === undefined) this.rollingBaseTime = now;
    this.size += buf.length;
    this.fileLength = Math.max(this.fileLength, this.size);
    this.unflushedBytes += buf.length;
    this.nextOffset = batches[batches.length - 1].lastOffset + 1;
  }

  private indexBatch(
    position: number,
    size: number,
    baseOffset: number,
    lastOffset: number,
    maxTimestamp: number,
  ): void {
    if (maxTimestamp > this.maxTimestamp) {
      this.maxTimestamp = maxTimestamp;
      this.offsetOfMaxTimestamp = lastOffset;
    }
    if (this.bytesSinceIndexEntry > this.config.indexIntervalBytes) {
      this.offsetIndex.append(baseOffset, position);
      this.timeIndex.maybeAppend(this.maxTimestamp, this.offsetOfMaxTimestamp);
      this.bytesSinceIndexEntry = 0;
    }
    this.bytesSinceIndexEntry += size;
  }

  /** True when either index has no room left: the log must roll before the next append. */
  indexFull(): boolean {
    return this.offsetIndex.isFull() || this.timeIndex.isFull();
  }

  /**
   * Position of the first batch whose last offset is >= `offset`, or -1 when every
   * batch of this segment ends before it. Binary search in the index, then a scan of
   * headers; an index entry that does not land on the batch it names (a corrupt
   * index) falls back to a scan from the start.
   */
  findPosition(offset: number): number {
    const entry = this.offsetIndex.lookup(offset);
    if (entry.position > 0) {
      const at = this.header(entry.position);
      if (at === undefined || readInt64(this.window, at) !== entry.offset)
        return this.scanForOffset(0, offset);
    }
    return this.scanForOffset(entry.position, offset);
  }

  private scanForOffset(from: number, offset: number): number {
    let pos = from;
    while (pos < this.size) {
      const at = this.header(pos);
      if (at === undefined) return -1;
      const base = readInt64(this.window, at);
      if (base + this.window.readInt32BE(at + LAST_OFFSET_DELTA) >= offset) return pos;
      pos += LOG_OVERHEAD + this.window.readInt32BE(at + BATCH_LENGTH);
    }
    return -1;
  }

  /**
   * The earliest offset in this segment whose record timestamp is >= `timestamp`,
   * or undefined. Uses the time index to skip batches known to be older.
   */
  findOffsetByTimestamp(
    timestamp: number,
    fromOffset: number,
  ): { offset: number; timestamp: number } | undefined {
    if (this.maxTimestamp < timestamp) return undefined;
    const before = this.timeIndex.lookupBefore(timestamp);
    const start = Math.max(before?.offset ?? this.baseOffset, fromOffset);
    let pos = this.findPosition(start);
    if (pos < 0) return undefined;
    while (pos < this.size) {
      const at = this.header(pos);
      if (at === undefined) return undefined;
      const size = LOG_OVERHEAD + this.window.readInt32BE(at + BATCH_LENGTH);
      if (readInt64(this.window, at + 35) >= timestamp) {
        const batch = this.readAt(pos, size);
        for (const r of decodeRecords(batch, 0)) {
          if (r.offset >= fromOffset && r.timestamp >= timestamp) {
            return { offset: r.offset, timestamp: r.timestamp };
          }
        }
      }
      pos += size;
    }
    return undefined;
  }

  /**
   * Up to `maxBytes` of whole batches from `position`. With `minOneBatch`, the first
   * batch is returned whole even when it is larger than `maxBytes`, so a consumer
   * always makes progress (Kafka's KIP-74 rule). The bytes are read into a buffer
   * from `buffers` when given (a Fetch's answer buffers), else into a new one.
   */
  read(position: number, maxBytes: number, minOneBatch: boolean, buffers?: ReadBuffers): Buffer {
    const available = this.size - position;
    if (available <= 0) return EMPTY;
    let length = Math.min(maxBytes, available);
    if (length < available) {
      // Whether the first batch fits decides what to read, so nothing is read twice or
      // for nothing. Its header is in the scan window already: findPosition put it there.
      const at = this.header(position);
      if (at === undefined) return EMPTY;
      const first = LOG_OVERHEAD + this.window.readInt32BE(at + BATCH_LENGTH);
      if (first > length) {
        if (!minOneBatch) return EMPTY;
        length = first;
      }
    }
    const buf =
      buffers === undefined
        ? this.readAt(position, length)
        : this.readInto(buffers.lend(length), position, length);
    let end = 0;
    while (end + LOG_OVERHEAD <= buf.length) {
      const size = LOG_OVERHEAD + buf.readInt32BE(end + BATCH_LENGTH);
      if (end + size > buf.length) break;
      end += size;
    }
    return end === buf.length ? buf : buf.subarray(0, end);
  }

  /**
   * Calls `visit` for every batch, in order, with a buffer holding it whole and its
   * position in that buffer. Reads the file in large chunks (the cleaner's input) into
   * one buffer reused from chunk to chunk, so `buf` is valid only during the call:
   * a visitor copies whatever it keeps. (A fresh chunk per read left gigabytes of
   * garbage per cleaning of a large log, collected late on the broker thread.)
   */
  forEachBatch(visit: (buf: Buffer, at: number, filePosition: number) => void): void {
    let pos = 0;
    const reused = Buffer.allocUnsafeSlow(Math.min(RECOVERY_CHUNK_BYTES, this.size));
    while (pos + LOG_OVERHEAD <= this.size) {
      const chunk = this.readInto(reused, pos, Math.min(reused.length, this.size - pos));
      let at = 0;
      while (at + LOG_OVERHEAD <= chunk.length) {
        const size = LOG_OVERHEAD + chunk.readInt32BE(at + BATCH_LENGTH);
        if (at + size > chunk.length) break;
        visit(chunk, at, pos + at);
        at += size;
      }
      if (at === 0) {
        const size = LOG_OVERHEAD + chunk.readInt32BE(BATCH_LENGTH);
        visit(this.readAt(pos, size), 0, pos);
        at = size;
      }
      pos += at;
    }
  }

  /** Reads `length` bytes at `position` (pread). */
  readAt(position: number, length: number): Buffer {
    return this.readInto(Buffer.allocUnsafe(length), position, length);
  }

  /** Reads `length` bytes at `position` into the start of `buf`; returns the part read. */
  readInto(buf: Buffer, position: number, length: number): Buffer {
    let done = 0;
    while (done < length) {
      const n = readSync(this.fd, buf, done, length - done, position + done);
      if (n === 0) return buf.subarray(0, done);
      done += n;
    }
    return done === buf.length ? buf : buf.subarray(0, done);
  }

  /**
   * Makes the batch header at `pos` available in the scan window and returns its
   * index there; undefined when it is not a plausible v2 header inside `size`.
   */
  private header(pos: number): number | undefined {
    if (pos < 0 || pos + BATCH_HEADER_BYTES > this.size) return undefined;
    if (pos < this.windowStart || pos + BATCH_HEADER_BYTES > this.windowStart + this.windowLength) {
      const n = readSync(
        this.fd,
        this.window,
        0,
        Math.min(SCAN_WINDOW_BYTES, this.size - pos),
        pos,
      );
      this.windowStart = pos;
      this.windowLength = n;
      if (n < BATCH_HEADER_BYTES) return undefined;
    }
    const at = pos - this.windowStart;
    const length = this.window.readInt32BE(at + BATCH_LENGTH);
    if (length < BATCH_HEADER_BYTES - LOG_OVERHEAD || pos + LOG_OVERHEAD + length > this.size)
      return undefined;
    if (this.window.readInt8(at + MAGIC) !== 2) return undefined;
    return at;
  }

  private firstBatchMaxTimestamp(): number | undefined {
    const at = this.header(0);
    return at === undefined ? undefined : readInt64(this.window, at + 35);
  }

  /** Header-only scan for the segment's largest timestamp when no index says it. */
  private scanMaxTimestamp(): void {
    let pos = 0;
    while (pos < this.size) {
      const at = this.header(pos);
      if (at === undefined) return;
      const ts = readInt64(this.window, at + 35);
      if (ts > this.maxTimestamp) {
        this.maxTimestamp = ts;
        this.offsetOfMaxTimestamp =
          readInt64(this.window, at) + this.window.readInt32BE(at + LAST_OFFSET_DELTA);
      }
      pos += LOG_OVERHEAD + this.window.readInt32BE(at + BATCH_LENGTH);
    }
  }

  /**
   * Best effort: ftruncate needs no free space, so on a full disk it succeeds. If it
   * fails too (a dead device), the torn bytes past `size` are never read (readers stop
   * at `size`) and recovery cuts them by CRC after a restart.
   */
  private cutFailedAppend(position: number): void {
    try {
      // A preallocated file loses its preallocation here: it grows by appends from now.
      ftruncateSync(this.fd, position);
      this.fileLength = position;
    } catch {
      // The append's own error is the one to report.
    }
  }

  truncateTo(position: number): void {
    ftruncateSync(this.fd, position);
    this.size = position;
    this.fileLength = position;
    this.windowLength = 0;
    this.offsetIndex.truncateToPosition(position);
  }

  /**
   * The segment stops being active: its final time index entry records its max
   * timestamp, and a preallocated file is cut back to its valid bytes (Kafka's
   * onBecomeInactiveSegment trims the same way). Returns whether the file was cut:
   * the cut reaches the disk with the segment's next fsync.
   */
  onBecomeInactive(): boolean {
    if (this.size > 0) this.timeIndex.maybeAppend(this.maxTimestamp, this.offsetOfMaxTimestamp);
    if (this.fileLength <= this.size) return false;
    ftruncateSync(this.fd, this.size);
    this.fileLength = this.size;
    return true;
  }

  /** fsync of the .log on the libuv pool; resolves when the bytes written before it are durable. */
  fsyncAsync(): Promise<void> {
    this.unflushedBytes = 0;
    this.fsyncsInFlight++;
    return new Promise((resolve, reject) => {
      fsync(this.fd, (err) => {
        this.fsyncsInFlight--;
        if (this.closeWhenIdle && this.fsyncsInFlight === 0) this.close();
        if (err) reject(err);
        else resolve();
      });
    });
  }

  /** Synchronous flush of the log and both indexes (close, roll of a clean log, tests). */
  flushSync(): void {
    fsyncSync(this.fd);
    this.unflushedBytes = 0;
    this.offsetIndex.writeToFile(true);
    this.timeIndex.writeToFile(true);
  }

  writeIndexes(): void {
    this.offsetIndex.writeToFile(false);
    this.timeIndex.writeToFile(false);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
  }

  /**
   * Removes the segment's files at once (so a file of the same name created next, a
   * cleaner's replacement, is never touched); the descriptor is closed when an fsync
   * still in flight on it completes. `keepTxnIndex` leaves the aborted-transaction
   * index for a replacement of the same base offset, so no crash loses its entries.
   */
  delete(keepTxnIndex = false): void {
    const paths = [this.logPath, this.offsetIndex.path, this.timeIndex.path];
    if (!keepTxnIndex) paths.push(this.txnIndex.path);
    for (const path of paths) {
      if (existsSync(path)) unlinkSync(path);
    }
    if (this.fsyncsInFlight > 0) this.closeWhenIdle = true;
    else this.close();
  }
}

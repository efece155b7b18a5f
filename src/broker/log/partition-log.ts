/**
 * The durable log of one topic partition: an ordered list of segments, the last of
 * which (the active segment) takes appends.
 *
 * Directory `<dataDir>/<topic>-<partition>/`: segments (segment.ts), the checkpoint
 * (log-checkpoint.ts) and transient cleaner files (log-recovery.ts says which).
 *
 * Invariants: segments are sorted by base offset and never overlap; only the active
 * segment grows; offsets increase across the log (gaps only where the cleaner removed
 * records); logStartOffset <= logEndOffset; the high watermark is the log end offset
 * (a single node has no followers to wait for).
 *
 * Durability: an append is written to the page cache at once and acknowledged when
 * the flush policy allows: at once, or, when `flush.messages` unflushed records have
 * accumulated (1 = every append), after an fsync. Concurrent appends that need an
 * fsync share one (group commit, group-commit.ts). `flush.ms` is driven by the
 * scheduler through `flushIfDue`. After a crash, recovery keeps every fsynced byte
 * and truncates the rest at the first bad batch. A write or fsync that fails (a full
 * disk) is answered KAFKA_STORAGE_ERROR; a failed write is cut back first, and the
 * partition keeps serving reads and taking appends (appendFailed says why).
 *
 * Concurrency contract: every method runs on the broker thread and all file I/O is
 * synchronous except fsync, so a read, an append, a retention pass and a cleaner swap
 * each happen atomically with respect to the others: a reader always sees a
 * consistent segment list and whole batches. Appends to one partition are therefore
 * serialized by construction. The cleaner prepares its output off to the side and
 * swaps it in with `swapInCleaned`, a synchronous step.
 */
import {
  close as closeFd,
  fsync,
  mkdirSync,
  open as openFd,
  readdirSync,
  renameSync,
  unlinkSync,
} from 'node:fs';
import { join } from 'node:path';
import {
  batchLastOffset,
  decodeRecords,
  iterateBatches,
  type Record as LogRecord,
  PARTITION_LEADER_EPOCH,
  setBaseOffset,
  stampLogAppendTime,
} from '../../protocol/record-batch.ts';
import type { Clock } from '../../util/clock.ts';
import { getLogger, type Logger } from '../../util/logger.ts';
import { recompressBatches, timestampBounds, validateBatches } from './append-validator.ts';
import { fsyncDir } from './atomic-file.ts';
import { isIoError, LogError, storageError } from './errors.ts';
import { GroupCommit } from './group-commit.ts';
import {
  checkpointText,
  type RecoveryPoint,
  readCheckpoint,
  writeCheckpoint,
} from './log-checkpoint.ts';
import { recoverPartitionDir } from './log-recovery.ts';
import { segmentsToDelete } from './retention.ts';
import { LogSegment, type ReadBuffers, segmentFileName } from './segment.ts';
import type { TopicConfig } from './topic-config.ts';
import type { AbortedTxn } from './transaction-index.ts';

export interface AppendResult {
  baseOffset: number;
  lastOffset: number;
  /** The stamped time on LogAppendTime topics, -1 otherwise (as Produce responses say). */
  logAppendTime: number;
  logStartOffset: number;
  recordCount: number;
}

export interface ReadResult {
  /** Whole batches, byte for byte as stored, starting with the batch holding fetchOffset. */
  records: Buffer;
  highWatermark: number;
  logStartOffset: number;
}

export interface PartitionLogOptions {
  dir: string;
  topic: string;
  partition: number;
  config: TopicConfig;
  clock: Clock;
  /** Uniform in [0, 1): draws each segment's segment.jitter.ms share (tests inject it). */
  random?: () => number;
  logger?: Logger;
}

/** Relative offsets in the indexes are u32: roll before an offset would not fit. */
const MAX_RELATIVE_OFFSET = 0xffffffff;

/**
 * The leader epoch of every partition of the single node: it never changes leader.
 * Stamped on each appended batch as Kafka's leader does, answered by Metadata and
 * ListOffsets, and checked against current_leader_epoch and last_fetched_epoch.
 */
export const LEADER_EPOCH = 0;

export class PartitionLog {
  readonly dir: string;
  readonly topic: string;
  readonly partition: number;
  config: TopicConfig;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly logger: Logger;
  private segmentList: LogSegment[];
  private startOffset: number;
  private endOffset: number;
  private recoveryPoint: RecoveryPoint;
  private checkpointed: RecoveryPoint | undefined;
  /** The checkpoint file's text as last read or written; undefined when unknown. */
  private checkpointOnDisk: string | undefined;
  private unflushedMessages = 0;
  private lastFlushTime: number;
  private dirty = new Set<LogSegment>();
  private dirNeedsSync = false;
  private readonly groupCommit = new GroupCommit(() => this.flushRound());
  private waiters: { afterOffset: number; resolve: () => void }[] = [];
  private closed = false;
  /** When appends started failing with storage errors; undefined while they succeed. */
  private failingSince: number | undefined;

  private constructor(
    options: PartitionLogOptions,
    segments: LogSegment[],
    logStartOffset: number,
  ) {
    this.dir = options.dir;
    this.topic = options.topic;
    this.partition = options.partition;
    this.config = options.config;
    this.clock = options.clock;
    this.random = options.random ?? Math.random;
    this.logger =
      options.logger ??
      getLogger('broker.log', { topic: options.topic, partition: options.partition });
    this.segmentList = segments;
    const active = segments[segments.length - 1];
    active.rollJitterMs = this.rollJitter();
    this.endOffset = active.nextOffset;
    this.startOffset = Math.min(Math.max(logStartOffset, segments[0].baseOffset), this.endOffset);
    this.recoveryPoint = {
      offset: this.endOffset,
      segment: active.baseOffset,
      position: active.size,
    };
    this.lastFlushTime = this.clock.now();
  }

  /**
   * Opens (creating if needed) the partition directory and recovers it;
   * `recoveryInfo` then says what recovery did, for the caller to report.
   */
  static open(options: PartitionLogOptions): PartitionLog {
    mkdirSync(options.dir, { recursive: true });
    const logger =
      options.logger ??
      getLogger('broker.log', { topic: options.topic, partition: options.partition });
    const segmentConfig = {
      indexIntervalBytes: options.config.indexIntervalBytes,
      segmentIndexBytes: options.config.segmentIndexBytes,
    };
    const checkpoint = readCheckpoint(options.dir);
    const recovered = recoverPartitionDir(options.dir, segmentConfig, checkpoint, logger);
    const segments = recovered.segments;
    if (segments.length === 0) {
      const base = checkpoint?.logStartOffset ?? 0;
      segments.push(
        LogSegment.create(options.dir, base, segmentConfig, preallocateBytes(options.config)),
      );
      fsyncDir(options.dir);
    }
    const log = new PartitionLog({ ...options, logger }, segments, checkpoint?.logStartOffset ?? 0);
    log.checkpointed = checkpoint?.recoveryPoint;
    log.checkpointOnDisk = checkpoint && checkpointText(checkpoint);
    log.recoveryInfo = {
      truncatedBytes: recovered.truncatedBytes,
      scannedSegments: recovered.scannedSegments,
    };
    return log;
  }

  /** What the last open's recovery did (tests and operators' logs). */
  recoveryInfo = { truncatedBytes: 0, scannedSegments: 0 };

  get logStartOffset(): number {
    return this.startOffset;
  }

  get logEndOffset(): number {
    return this.endOffset;
  }

  get highWatermark(): number {
    return this.endOffset;
  }

  /** Valid bytes over all segments: a preallocated file's unused tail does not count. */
  get size(): number {
    return this.segmentList.reduce((sum, s) => sum + s.size, 0);
  }

  /** The segments, oldest first; the last is active. A snapshot: callers must not keep it across awaits. */
  get segments(): readonly LogSegment[] {
    return this.segmentList;
  }

  get activeSegment(): LogSegment {
    return this.segmentList[this.segmentList.length - 1];
  }

  /**
   * Validates, assigns offsets to, and appends the batches in `batches` (the Produce
   * request's records, mutated in place: base offsets and, on LogAppendTime topics,
   * timestamps and CRCs; on a topic whose compression.type re-encodes a batch, the
   * new buffer is stamped instead and `batches` is left as it came). Resolves once
   * the flush policy allows acknowledging it.
   * Rejects with LogError (see append-validator.ts) without writing anything when any
   * batch is invalid, and with KAFKA_STORAGE_ERROR, leaving the log as it was, when
   * the write fails (appendFailed).
   */
  append(batches: Buffer): Promise<AppendResult> {
    try {
      return this.appendNow(batches);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  private appendNow(produced: Buffer): Promise<AppendResult> {
    if (this.closed)
      throw new LogError('NOT_LEADER_OR_FOLLOWER', `log ${this.topic}-${this.partition} is closed`);
    const config = this.config;
    const now = this.clock.now();
    const validated = validateBatches(produced, {
      maxMessageBytes: config.maxMessageBytes,
      segmentBytes: config.segmentBytes,
      compacted: config.cleanupPolicy.compact,
      topicPartition: `${this.topic}-${this.partition}`,
      timestamps: timestampBounds(config, now),
    });
    // compression.type: batches in another codec are re-encoded into a new buffer.
    const buf =
      config.compression === undefined
        ? produced
        : recompressBatches(produced, validated, config.compression, config);
    const baseOffset = this.endOffset;
    let next = baseOffset;
    for (const b of validated.batches) {
      const lastOffsetDelta = b.lastOffset;
      setBaseOffset(buf, b.position, next);
      buf.writeInt32BE(LEADER_EPOCH, b.position + PARTITION_LEADER_EPOCH);
      b.baseOffset = next;
      b.lastOffset = next + lastOffsetDelta;
      if (config.logAppendTime) {
        stampLogAppendTime(buf, b.position, now);
        b.maxTimestamp = now;
      }
      next = b.lastOffset + 1;
    }
    const lastOffset = next - 1;
    try {
      this.maybeRoll(buf.length, lastOffset, now);
      if (validated.batches.length > 0) this.activeSegment.append(buf, validated.batches, now);
    } catch (e) {
      throw this.appendFailed(e);
    }
    this.appendsResumed();
    const active = this.activeSegment;
    if (validated.batches.length > 0) {
      this.dirty.add(active);
      this.endOffset = next;
      this.unflushedMessages += validated.recordCount;
      this.wakeWaiters();
    }
    const result: AppendResult = {
      baseOffset: validated.batches.length > 0 ? baseOffset : -1,
      lastOffset: validated.batches.length > 0 ? lastOffset : -1,
      logAppendTime: config.logAppendTime ? now : -1,
      logStartOffset: this.startOffset,
      recordCount: validated.recordCount,
    };
    if (this.unflushedMessages >= config.flushMessages) {
      return this.flush().then(() => result);
    }
    return Promise.resolve(result);
  }

  /**
   * An append that could not be written (disk full, I/O error): the segment cut its
   * torn bytes and no offset was given out, so the partition stays as it was and
   * takes the next append. Kafka instead takes the whole log dir offline until a
   * restart (LogDirFailureChannel), because another replica can lead meanwhile; a
   * single node has no other replica, so refusing only the appends that fail lets
   * producers resume by themselves once space returns, and keeps reads served. The
   * first failure is logged as an error, later ones only at debug (one line per
   * produce on a full disk would fill the logs too), and the recovery once.
   */
  private appendFailed(e: unknown): unknown {
    if (!isIoError(e)) return e;
    const where = `append to ${this.topic}-${this.partition}`;
    if (this.failingSince === undefined) {
      this.failingSince = this.clock.now();
      this.logger.error({ err: e, dir: this.dir }, `${where} failed; refusing appends that fail`);
    } else {
      this.logger.debug({ code: e.code }, `${where} failed again`);
    }
    return storageError(where, e);
  }

  private appendsResumed(): void {
    if (this.failingSince === undefined) return;
    this.logger.info(
      { failedForMs: this.clock.now() - this.failingSince },
      'appends succeed again after storage errors',
    );
    this.failingSince = undefined;
  }

  private maybeRoll(incomingBytes: number, lastOffset: number, now: number): void {
    const active = this.activeSegment;
    if (active.isEmpty) return;
    const config = this.config;
    const why =
      active.size + incomingBytes > config.segmentBytes
        ? 'segment.bytes'
        : active.rollingBaseTime !== undefined &&
            now - active.rollingBaseTime >= config.segmentMs - active.rollJitterMs
          ? 'segment.ms'
          : active.indexFull()
            ? 'index full'
            : lastOffset - active.baseOffset > MAX_RELATIVE_OFFSET
              ? 'relative offset overflow'
              : undefined;
    if (why === undefined) return;
    this.roll();
    this.logger.debug({ reason: why, newSegment: this.endOffset }, 'rolled a new segment');
  }

  /**
   * Starts a new active segment at the log end offset, preallocated when the topic
   * says so. A preallocated old segment is trimmed to its valid bytes and marked
   * dirty, so the trim is fsynced before a checkpoint trusts the segment whole.
   */
  roll(): void {
    const old = this.activeSegment;
    if (old.isEmpty) return;
    if (old.onBecomeInactive()) this.dirty.add(old);
    old.writeIndexes();
    const segment = LogSegment.create(
      this.dir,
      this.endOffset,
      {
        indexIntervalBytes: this.config.indexIntervalBytes,
        segmentIndexBytes: this.config.segmentIndexBytes,
      },
      preallocateBytes(this.config),
    );
    segment.rollJitterMs = this.rollJitter();
    this.segmentList = [...this.segmentList, segment];
    this.dirNeedsSync = true;
  }

  /**
   * segment.jitter.ms for a new active segment: uniform in [0, min(jitter, segment.ms)),
   * as Kafka's LogConfig.randomSegmentJitter draws it; 0 without jitter.
   */
  private rollJitter(): number {
    const { segmentJitterMs, segmentMs } = this.config;
    if (segmentJitterMs === 0) return 0;
    return Math.floor(this.random() * Math.min(segmentJitterMs, segmentMs));
  }

  /**
   * Whole batches from the one holding `fetchOffset`, up to `maxBytes` (at least one
   * batch when `minOneBatch`), from a single segment as Kafka does. OFFSET_OUT_OF_RANGE
   * when fetchOffset is outside [logStartOffset, logEndOffset]. The records are read
   * into a buffer from `buffers` when given (segment.ts); an empty read takes none.
   */
  read(
    fetchOffset: number,
    maxBytes: number,
    minOneBatch = true,
    buffers?: ReadBuffers,
  ): ReadResult {
    if (fetchOffset < this.startOffset || fetchOffset > this.endOffset) {
      throw new LogError(
        'OFFSET_OUT_OF_RANGE',
        `offset ${fetchOffset} is outside [${this.startOffset}, ${this.endOffset}] of ${this.topic}-${this.partition}`,
      );
    }
    const result = (records: Buffer): ReadResult => ({
      records,
      highWatermark: this.endOffset,
      logStartOffset: this.startOffset,
    });
    if (fetchOffset === this.endOffset) return result(Buffer.alloc(0));
    const segments = this.segmentList;
    for (let i = this.segmentIndexFor(fetchOffset); i < segments.length; i++) {
      const position = segments[i].findPosition(fetchOffset);
      if (position < 0) continue;
      const records = segments[i].read(position, maxBytes, minOneBatch, buffers);
      if (records.length > 0) return result(records);
    }
    return result(Buffer.alloc(0));
  }

  /** Index of the last segment whose base offset is <= offset (0 if none). */
  private segmentIndexFor(offset: number): number {
    const segments = this.segmentList;
    let lo = 0;
    let hi = segments.length - 1;
    let found = 0;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (segments[mid].baseOffset <= offset) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found;
  }

  /**
   * The earliest offset whose record timestamp is >= `timestamp`, with that record's
   * timestamp (ListOffsets by time); undefined when every record is older.
   */
  offsetForTimestamp(timestamp: number): { offset: number; timestamp: number } | undefined {
    for (const segment of this.segmentList) {
      if (segment.nextOffset <= this.startOffset) continue;
      const found = segment.findOffsetByTimestamp(timestamp, this.startOffset);
      if (found !== undefined) return found;
    }
    return undefined;
  }

  /**
   * The first record with the log's largest timestamp, with that timestamp (ListOffsets
   * MAX_TIMESTAMP, KIP-734): in the first segment holding the largest, as Kafka picks
   * it; undefined when no record has a timestamp.
   */
  maxTimestampOffset(): { offset: number; timestamp: number } | undefined {
    let best: LogSegment | undefined;
    for (const segment of this.segmentList) {
      if (segment.nextOffset <= this.startOffset) continue;
      if (
        segment.maxTimestamp >= 0 &&
        (best === undefined || segment.maxTimestamp > best.maxTimestamp)
      )
        best = segment;
    }
    return best?.findOffsetByTimestamp(best.maxTimestamp, this.startOffset);
  }

  /**
   * Aborted transactions whose records may lie in [from, upTo): what a
   * read_committed Fetch of that range answers with. An entry sits in the segment of
   * its ABORT marker, so every segment from the one holding `from` is searched.
   */
  abortedTransactions(from: number, upTo: number): AbortedTxn[] {
    const out: AbortedTxn[] = [];
    const segments = this.segmentList;
    for (let i = this.segmentIndexFor(from); i < segments.length; i++) {
      out.push(...segments[i].txnIndex.overlapping(from, upTo));
    }
    return out;
  }

  /** Adds an aborted transaction to the index of the segment holding its ABORT marker. */
  recordAbortedTxn(entry: AbortedTxn): void {
    this.segmentList[this.segmentIndexFor(entry.lastOffset)].txnIndex.append(entry);
  }

  /** Whether a segment's aborted-transaction index was corrupt and must be rebuilt from the log. */
  get txnIndexLost(): boolean {
    return this.segmentList.some((s) => s.txnIndex.lost);
  }

  /** After a rebuild from the log start: the indexes are whole again. */
  markTxnIndexesRebuilt(): void {
    for (const s of this.segmentList) s.txnIndex.lost = false;
  }

  /** ListOffsets -2. */
  earliestOffset(): number {
    return this.startOffset;
  }

  /** ListOffsets -1. */
  latestOffset(): number {
    return this.endOffset;
  }

  /**
   * DeleteRecords: advances the log start offset to `offset` (never backwards),
   * deletes segments wholly below it and persists the new start before resolving.
   */
  async deleteRecordsBefore(offset: number): Promise<number> {
    if (offset > this.endOffset || offset < 0) {
      throw new LogError(
        'OFFSET_OUT_OF_RANGE',
        `cannot delete records before ${offset}: the log ends at ${this.endOffset}`,
      );
    }
    if (offset > this.startOffset) {
      this.startOffset = offset;
      this.deleteOldSegments();
      this.writeCheckpoint();
    }
    return this.startOffset;
  }

  /**
   * Retention: deletes whole segments past retention.ms/retention.bytes (delete
   * policy) or below the log start offset. Returns how many were deleted.
   */
  deleteOldSegments(now = this.clock.now()): number {
    const { count, reason } = segmentsToDelete(
      this.segmentList,
      {
        deletePolicy: this.config.cleanupPolicy.delete,
        retentionMs: this.config.retentionMs,
        retentionBytes: this.config.retentionBytes,
      },
      this.startOffset,
      now,
    );
    if (count === 0) return 0;
    const doomed = this.segmentList.slice(0, count);
    this.segmentList = this.segmentList.slice(count);
    this.startOffset = Math.max(this.startOffset, this.segmentList[0].baseOffset);
    for (const segment of doomed) {
      this.dirty.delete(segment);
      segment.delete();
    }
    this.logger.info(
      { segments: doomed.map((s) => s.baseOffset), reason, logStartOffset: this.startOffset },
      `deleted ${count} segment(s) by ${reason}`,
    );
    this.writeCheckpoint();
    return count;
  }

  /**
   * Resolves when the log end offset is above `afterOffset`, when `signal` aborts, or
   * when the log closes: the Fetch long poll waits on this (and then reads).
   */
  waitForData(afterOffset: number, signal?: AbortSignal): Promise<void> {
    if (this.endOffset > afterOffset || this.closed || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter = {
        afterOffset,
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  private wakeWaiters(): void {
    if (this.waiters.length === 0) return;
    const ready = this.waiters.filter((w) => w.afterOffset < this.endOffset || this.closed);
    if (ready.length === 0) return;
    this.waiters = this.waiters.filter((w) => !ready.includes(w));
    for (const w of ready) w.resolve();
  }

  /**
   * Makes everything appended so far durable. Concurrent calls share fsyncs: a call
   * made while one is running waits for the next round, which covers it.
   */
  flush(): Promise<void> {
    return this.groupCommit.request();
  }

  /** One group-commit round: fsyncs every segment written since the last one. */
  private async flushRound(): Promise<void> {
    const active = this.activeSegment;
    const point: RecoveryPoint = {
      offset: this.endOffset,
      segment: active.baseOffset,
      position: active.size,
    };
    const segments = [...this.dirty];
    this.dirty.clear();
    this.unflushedMessages = 0;
    this.lastFlushTime = this.clock.now();
    const dirSync = this.dirNeedsSync;
    this.dirNeedsSync = false;
    try {
      await Promise.all(segments.map((s) => s.fsyncAsync()));
      if (dirSync) await fsyncDirAsync(this.dir);
    } catch (e) {
      for (const s of segments) this.dirty.add(s);
      this.dirNeedsSync ||= dirSync;
      this.logger.error({ err: e }, 'fsync failed');
      throw new LogError('KAFKA_STORAGE_ERROR', `fsync in ${this.dir} failed: ${String(e)}`);
    }
    if (point.offset >= this.recoveryPoint.offset) this.recoveryPoint = point;
  }

  /** flush.ms: flushes when unflushed records are older than the topic allows. */
  flushIfDue(now = this.clock.now()): Promise<void> | undefined {
    if (this.unflushedMessages === 0 || now - this.lastFlushTime < this.config.flushMs)
      return undefined;
    return this.flush();
  }

  /**
   * Persists the recovery point (and log start offset). Recovery after a crash trusts
   * what it names and scans what follows; the indexes it relies on are written first.
   */
  writeCheckpoint(): void {
    const rp = this.recoveryPoint;
    for (const s of this.segmentList) {
      if (s.baseOffset <= rp.segment) s.writeIndexes();
    }
    const stillThere = this.segmentList.some((s) => s.baseOffset === rp.segment);
    const recoveryPoint = stillThere ? rp : undefined;
    this.checkpointOnDisk = writeCheckpoint(
      this.dir,
      { logStartOffset: this.startOffset, recoveryPoint },
      this.checkpointOnDisk,
    );
    this.checkpointed = recoveryPoint;
  }

  /**
   * Before the cleaner rewrites segments below `offset`, the persisted recovery point
   * must lie beyond them (recovery trusts byte positions before it). Flushes and
   * checkpoints when it does not.
   */
  async checkpointBeyond(offset: number): Promise<void> {
    if (
      this.checkpointed &&
      this.checkpointed.offset >= offset &&
      this.checkpointed.segment >= offset
    )
      return;
    await this.flush();
    this.writeCheckpoint();
  }

  /**
   * Replaces `old` (consecutive segments still in this log) with the cleaned file at
   * `swapPath` (`<old[0] base>.log.swap`, fsynced, holding batches with the same
   * offsets range) and, when the cleaner changed it, the aborted-transaction index at
   * `txnIndexSwap` (`<old[0] base>.txnindex.swap`, written before `swapPath` was
   * renamed into place). Returns false, discarding the swap, if the segments changed
   * meanwhile (retention deleted them). Synchronous: readers see the old list or the
   * new one. A crash in here is completed by recovery (log-recovery.ts).
   */
  swapInCleaned(old: readonly LogSegment[], swapPath: string, txnIndexSwap?: string): boolean {
    const first = this.segmentList.indexOf(old[0]);
    const stillThere =
      first >= 0 &&
      old.every((s, i) => this.segmentList[first + i] === s) &&
      first + old.length < this.segmentList.length;
    if (!stillThere) {
      unlinkSync(swapPath);
      if (txnIndexSwap !== undefined) unlinkSync(txnIndexSwap);
      return false;
    }
    const base = old[0].baseOffset;
    // Without a new index the cleaned file keeps the aborted transactions indexed:
    // the first segment's index file stays in place for the replacement of its name.
    const aborted = old.flatMap((s) => s.txnIndex.all);
    old.forEach((s, i) => {
      this.dirty.delete(s);
      s.delete(i === 0);
    });
    renameSync(swapPath, join(this.dir, segmentFileName(base, '.log')));
    // After the log: a crash between the two renames leaves a .txnindex.swap with no
    // .log.cleaned beside it, which recovery installs (log-recovery.ts).
    if (txnIndexSwap !== undefined) {
      renameSync(txnIndexSwap, join(this.dir, segmentFileName(base, '.txnindex')));
    }
    fsyncDir(this.dir);
    const replacement = LogSegment.open(this.dir, base, {
      indexIntervalBytes: this.config.indexIntervalBytes,
      segmentIndexBytes: this.config.segmentIndexBytes,
    });
    replacement.recover(0, base);
    if (old.length > 1 && txnIndexSwap === undefined) replacement.txnIndex.rewrite(aborted);
    replacement.onBecomeInactive();
    replacement.writeIndexes();
    const next = [...this.segmentList];
    next.splice(first, old.length, replacement);
    this.segmentList = next;
    return true;
  }

  /** Flushes everything, writes indexes and a checkpoint at the log end (clean shutdown), closes files. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.flush();
    await this.groupCommit.idle();
    this.closed = true;
    const active = this.activeSegment;
    for (const s of this.segmentList) {
      if (s === active) s.onBecomeInactive();
      s.writeIndexes();
    }
    this.recoveryPoint = {
      offset: this.endOffset,
      segment: active.baseOffset,
      position: active.size,
    };
    this.writeCheckpoint();
    for (const s of this.segmentList) s.close();
    this.wakeWaiters();
  }

  /** Closes and removes the partition directory (DeleteTopics). */
  async deleteAll(): Promise<void> {
    await this.groupCommit.idle();
    this.closed = true;
    for (const s of this.segmentList) s.delete();
    this.wakeWaiters();
    for (const name of readdirSync(this.dir)) unlinkSync(join(this.dir, name));
  }

  /** Decoded records from `fromOffset` (tests and tools; the broker serves raw batches). */
  *records(fromOffset = this.startOffset): Generator<LogRecord> {
    let offset = fromOffset;
    while (offset < this.endOffset) {
      const { records } = this.read(offset, 1024 * 1024, true);
      if (records.length === 0) return;
      // Checks every CRC: a tool reading the log must never hand out a corrupt record.
      for (const { position } of iterateBatches(records, 0, records.length, true)) {
        for (const r of decodeRecords(records, position)) {
          if (r.offset >= offset) yield r;
        }
        offset = Math.max(offset, batchLastOffset(records, position) + 1);
      }
    }
  }
}

/** Kafka's LogConfig.initFileSize: a new segment's file is segment.bytes long with preallocate. */
function preallocateBytes(config: TopicConfig): number {
  return config.preallocate ? config.segmentBytes : 0;
}

function fsyncDirAsync(dir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    openFd(dir, 'r', (err, fd) => {
      if (err) return reject(err);
      fsync(fd, (syncErr) => {
        closeFd(fd, () => (syncErr ? reject(syncErr) : resolve()));
      });
    });
  });
}

/**
 * Fetch (key 1): stored record batches, byte for byte, for each requested partition.
 *
 * Sizes: each partition reads at most its partitionMaxBytes and the response at most
 * maxBytes (v3+), except that the first partition with data always gets one whole
 * batch, however large, so a consumer can never be stuck behind a big batch.
 *
 * Long poll: when fewer than minBytes are available and maxWaitMs > 0, the request
 * waits until one of its partitions grows (PartitionLog.waitForData), maxWaitMs
 * passes, or the log closes, then reads again; an error on any partition answers at
 * once; so does every waiting Fetch when the broker stops.
 *
 * Buffers: records go out through encodeResponseChunks as the Buffers the log read,
 * never re-encoded, and are read into buffers the answer borrows from the socket
 * server (connection.answerBuffers, server/answer-buffers.ts), which takes them back
 * once the answer is written. So nothing here keeps records past the answer, and
 * what the answer will not carry goes back at once: the reads of a pass the long
 * poll drops, and a read holding nothing but empty batches.
 *
 * Transactions: every answer carries the partition's last stable offset (LSO: the
 * first offset of its oldest open transaction, else the high watermark). With
 * isolation_level 1 (read_committed) records are answered only below the LSO, whole
 * batches, and with the aborted transactions whose ranges overlap the answered
 * records (from the segments' .txnindex), so the consumer drops their records; with
 * isolation_level 0 the list is empty. Control batches are sent as stored: clients
 * read the markers and never hand them to applications.
 *
 * Leader epochs (the single node's is always LEADER_EPOCH, stamped on every batch it
 * appends): a current_leader_epoch (v9+) above it is UNKNOWN_LEADER_EPOCH. A
 * last_fetched_epoch (v12+) is checked as Kafka's Partition.readRecords does, over an
 * epoch cache holding LEADER_EPOCH from the log start (Kafka records it when the
 * partition gets its leader, so an empty log has it too): a later epoch is
 * OFFSET_OUT_OF_RANGE; for LEADER_EPOCH, a fetch offset past the log end gets no
 * records but a diverging epoch {LEADER_EPOCH, log end}, which tells the client to
 * truncate to the log end rather than reset its position.
 *
 * Topic ids (v13+): topics are named by id, answered by id; an id no topic has is
 * UNKNOWN_TOPIC_ID for each of its partitions. v15's replica state and v17's
 * directory id come only from followers, which a single node has none of; v16's
 * node endpoints go with NOT_LEADER answers, which a single node never gives.
 *
 * zstd (KIP-110): Fetch v10 is the first a client sends only if it reads zstd. Below
 * it, a partition of a topic whose compression.type is zstd (the broker writes every
 * batch in zstd) is UNSUPPORTED_COMPRESSION_TYPE, with no records and no offsets, as
 * Kafka's KafkaApis answers it; other partitions of the request are served. As in
 * Kafka, the check is the topic's config, not the batches: zstd batches a producer
 * wrote to a compression.type=producer topic go out as stored (clients that send
 * v4-v9 but decode zstd keep reading them), and a client that cannot decode them
 * fails on the codec id itself.
 *
 * No fetch sessions: session id 0. A single node: preferred read replica -1.
 */
import { setMaxListeners } from 'node:events';
import type { Message } from '../../protocol/codec.ts';
import { CompressionCodec } from '../../protocol/compression.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import {
  ATTR_CONTROL,
  ATTRIBUTES,
  batchBaseOffset,
  batchLastOffset,
  batchSize,
  RECORD_COUNT,
  RECORDS,
} from '../../protocol/record-batch.ts';
import { LogError } from '../log/errors.ts';
import { LEADER_EPOCH, type PartitionLog } from '../log/partition-log.ts';
import { recordFetched } from '../metrics/broker-metrics.ts';
import type { AnswerBuffers } from '../server/answer-buffers.ts';
import type { BrokerServices } from './broker-services.ts';
import type { RequestHandler } from './handler.ts';

const EMPTY = Buffer.alloc(0);
/** The aborted-transactions list of most answers, shared: the encoder only reads it. */
const NO_ABORTED_TXNS: readonly Message[] = Object.freeze([]);
const READ_COMMITTED = 1;
/** First Fetch version whose client can read zstd batches (KIP-110). */
const ZSTD_FETCH_FROM = 10;

interface Wanted {
  /** The topic's name; for an unknown id (v13+), the id. */
  topic: string;
  /** v13+: the id the request named the topic by; undefined before. */
  topicId?: string;
  partition: number;
  fetchOffset: number;
  /** -1: none given (or a version without the field). */
  currentLeaderEpoch: number;
  lastFetchedEpoch: number;
  maxBytes: number;
  log: PartitionLog | LogError;
}

export const handleFetch: RequestHandler<BrokerServices> = async (body, context, services) => {
  const buffers = context.connection.answerBuffers;
  const wanted: Wanted[] = [];
  const byId = context.apiVersion >= 13;
  for (const t of body.topics as Message[]) {
    const name = byId ? services.logs.topicById(t.topicId)?.name : (t.topic as string);
    for (const p of t.partitions as Message[]) {
      let log: PartitionLog | LogError;
      if (name === undefined) {
        log = new LogError('UNKNOWN_TOPIC_ID', `no topic has id ${t.topicId}`);
      } else {
        try {
          log = services.logs.getLog(name, p.partition);
        } catch (e) {
          if (!(e instanceof LogError)) throw e;
          log = e;
        }
      }
      wanted.push({
        topic: name ?? (t.topicId as string),
        ...(byId ? { topicId: t.topicId as string } : {}),
        partition: p.partition,
        fetchOffset: Number(p.fetchOffset),
        currentLeaderEpoch: (p.currentLeaderEpoch as number | undefined) ?? -1,
        lastFetchedEpoch: (p.lastFetchedEpoch as number | undefined) ?? -1,
        maxBytes: p.partitionMaxBytes,
        log,
      });
    }
  }
  const maxBytes = Math.max(0, body.maxBytes as number);
  const minBytes = body.minBytes as number;
  const deadline = services.clock.now() + Math.max(0, body.maxWaitMs as number);
  const readCommitted = body.isolationLevel === READ_COMMITTED;
  const zstdReadable = context.apiVersion >= ZSTD_FETCH_FROM;
  /** When the long poll first waited (undefined: it did not), for the purgatory time. */
  let waitStart: number | undefined;
  for (;;) {
    const pass = readAll(wanted, maxBytes, buffers, readCommitted, zstdReadable, services);
    const remaining = deadline - services.clock.now();
    if (
      pass.bytes >= minBytes ||
      pass.failed ||
      remaining <= 0 ||
      wanted.length === 0 ||
      services.stopping.aborted
    ) {
      if (services.metrics !== undefined && pass.bytes > 0)
        recordFetched(services.metrics, pass.responses);
      services.metrics?.recordRemoteTime?.(
        'Fetch',
        waitStart === undefined ? 0 : performance.now() - waitStart,
      );
      return { throttleTimeMs: 0, errorCode: 0, sessionId: 0, responses: pass.responses };
    }
    // This pass is dropped: nothing reads its records again, and the next pass reads anew.
    if (buffers) for (const records of pass.records) buffers.giveBack(records);
    waitStart ??= performance.now();
    services.metrics?.purgatoryEntered?.('Fetch');
    try {
      await waitForAny(wanted, pass.ends, remaining, services.stopping);
    } finally {
      services.metrics?.purgatoryLeft?.('Fetch');
    }
  }
};

function readAll(
  wanted: Wanted[],
  maxBytes: number,
  buffers: AnswerBuffers | undefined,
  readCommitted: boolean,
  zstdReadable: boolean,
  services: BrokerServices,
): { responses: Message[]; records: Buffer[]; bytes: number; failed: boolean; ends: number[] } {
  const responses: Message[] = [];
  const records: Buffer[] = [];
  const ends: number[] = [];
  let bytes = 0;
  let failed = false;
  let current: Message | undefined;
  for (const w of wanted) {
    if (current === undefined || current.topic !== w.topic) {
      current = { topic: w.topic, topicId: w.topicId, partitions: [] };
      responses.push(current);
    }
    const partition: Message = {
      partitionIndex: w.partition,
      errorCode: 0,
      highWatermark: -1,
      lastStableOffset: -1,
      logStartOffset: -1,
      abortedTransactions: NO_ABORTED_TXNS,
      preferredReadReplica: -1,
      records: EMPTY,
    };
    current.partitions.push(partition);
    const log = w.log;
    if (log instanceof LogError) {
      partition.errorCode = ErrorCode[log.kafkaError];
      failed = true;
      ends.push(-1);
      continue;
    }
    ends.push(log.logEndOffset);
    if (!zstdReadable && log.config.compression?.codec === CompressionCodec.zstd) {
      // Before any other check of the partition, as in Kafka (see the header).
      partition.errorCode = ErrorCode.UNSUPPORTED_COMPRESSION_TYPE;
      failed = true;
      continue;
    }
    const lso = services.producerStates.lastStableOffset(log);
    const epochs = checkEpochs(w, log);
    if (epochs !== undefined) {
      partition.highWatermark = log.highWatermark;
      partition.lastStableOffset = lso;
      partition.logStartOffset = log.logStartOffset;
      if (typeof epochs === 'number') {
        partition.errorCode = epochs;
        failed = true;
      } else {
        // No records: the answer itself is the news, so the long poll does not wait.
        partition.divergingEpoch = epochs;
        failed = true;
      }
      continue;
    }
    try {
      const limit = Math.min(w.maxBytes, maxBytes - bytes);
      const first = bytes === 0;
      const upTo = readCommitted ? lso : log.logEndOffset;
      const read =
        limit > 0 || first
          ? readPastEmptyBatches(log, w.fetchOffset, Math.max(0, limit), first, buffers, upTo)
          : undefined;
      partition.highWatermark = log.highWatermark;
      partition.lastStableOffset = lso;
      partition.logStartOffset = log.logStartOffset;
      if (read !== undefined && read.length > 0) {
        partition.records = read;
        records.push(read);
        bytes += read.length;
        if (readCommitted) {
          const end = lastOffsetOf(read) + 1;
          const aborted = log.abortedTransactions(w.fetchOffset, end);
          if (aborted.length > 0) {
            partition.abortedTransactions = aborted.map((a) => ({
              producerId: a.producerId,
              firstOffset: a.firstOffset,
            }));
          }
        }
      }
    } catch (e) {
      if (!(e instanceof LogError)) throw e;
      partition.errorCode = ErrorCode[e.kafkaError];
      partition.highWatermark = log.highWatermark;
      partition.lastStableOffset = lso;
      partition.logStartOffset = log.logStartOffset;
      failed = true;
    }
  }
  return { responses, records, bytes, failed, ends };
}

/**
 * What the partition's leader epochs say before reading: an error code, a diverging
 * epoch, or undefined to read (see the header).
 */
function checkEpochs(
  w: Wanted,
  log: PartitionLog,
): number | { epoch: number; endOffset: number } | undefined {
  if (w.currentLeaderEpoch > LEADER_EPOCH) return ErrorCode.UNKNOWN_LEADER_EPOCH;
  if (w.lastFetchedEpoch < 0) return undefined;
  // The epoch cache holds LEADER_EPOCH from the log start, nothing before or after.
  if (w.lastFetchedEpoch !== LEADER_EPOCH) return ErrorCode.OFFSET_OUT_OF_RANGE;
  if (w.fetchOffset < log.logStartOffset) return ErrorCode.OFFSET_OUT_OF_RANGE;
  if (w.fetchOffset > log.logEndOffset) return { epoch: LEADER_EPOCH, endOffset: log.logEndOffset };
  return undefined;
}

/**
 * A read that does not start with batches holding no records. The cleaner keeps a
 * producer's last batch with its records removed (so idempotent producer state
 * survives compaction, as Kafka does), and reads stop at segment ends, so a fetch can
 * answer with nothing but such a batch. Java clients step over it; kafkajs 2.2.4 does
 * not advance and fetches the same offset forever. So leading empty batches are left
 * out, reading on past them (into the next segment) when they are all there is. The
 * answer is otherwise what the log holds, byte for byte.
 */
function readPastEmptyBatches(
  log: PartitionLog,
  fetchOffset: number,
  maxBytes: number,
  minOneBatch: boolean,
  buffers: AnswerBuffers | undefined,
  upTo: number,
): Buffer {
  let offset = fetchOffset;
  for (;;) {
    if (offset >= upTo) {
      // Nothing below the bound (read_committed at the LSO). An empty read, so an
      // offset outside the log is still OFFSET_OUT_OF_RANGE.
      log.read(offset, 0, false);
      return EMPTY;
    }
    const records = below(log.read(offset, maxBytes, minOneBatch, buffers).records, upTo, buffers);
    let pos = 0;
    let lastEmpty = -1;
    while (
      pos + RECORDS <= records.length &&
      records.readInt32BE(pos + RECORD_COUNT) === 0 &&
      (records.readInt16BE(pos + ATTRIBUTES) & ATTR_CONTROL) === 0
    ) {
      lastEmpty = pos;
      pos += batchSize(records, pos);
    }
    if (pos === 0) return records;
    // A view: the answer carries it, and its buffer goes back when the answer is written.
    if (pos < records.length) return records.subarray(pos);
    offset = batchLastOffset(records, lastEmpty) + 1;
    buffers?.giveBack(records);
    if (offset >= Math.min(upTo, log.logEndOffset)) return EMPTY;
  }
}

/**
 * The leading batches of `records` that start below `upTo` (the LSO for
 * read_committed: it is always a batch boundary, the first batch of an open
 * transaction or the log end). A read left with nothing goes back at once.
 */
function below(records: Buffer, upTo: number, buffers: AnswerBuffers | undefined): Buffer {
  let pos = 0;
  while (pos + RECORDS <= records.length && batchBaseOffset(records, pos) < upTo) {
    pos += batchSize(records, pos);
  }
  if (pos >= records.length) return records;
  if (pos === 0) {
    if (records.length > 0) buffers?.giveBack(records);
    return EMPTY;
  }
  return records.subarray(0, pos);
}

/** The last offset of the last whole batch in `records`. */
function lastOffsetOf(records: Buffer): number {
  let pos = 0;
  let last = -1;
  while (pos + RECORDS <= records.length) {
    last = batchLastOffset(records, pos);
    pos += batchSize(records, pos);
  }
  return last;
}

/**
 * The reason every finished wait aborts with: `abort()` without one builds a DOMException
 * with a stack trace, once per long poll.
 */
const WAIT_OVER = Symbol('fetch wait over');

/** Resolves when any partition's log end passes what the last read saw, or after `ms`. */
async function waitForAny(
  wanted: Wanted[],
  ends: number[],
  ms: number,
  stopping: AbortSignal,
): Promise<void> {
  const abort = new AbortController();
  // One listener per partition of this request, by design: no leak warning for wide fetches.
  setMaxListeners(0, abort.signal);
  const onStop = () => abort.abort(WAIT_OVER);
  stopping.addEventListener('abort', onStop, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const waits: Promise<void>[] = [
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
      abort.signal.addEventListener('abort', () => resolve(), { once: true });
    }),
  ];
  wanted.forEach((w, i) => {
    if (!(w.log instanceof LogError)) waits.push(w.log.waitForData(ends[i]!, abort.signal));
  });
  try {
    await Promise.race(waits);
  } finally {
    clearTimeout(timer);
    stopping.removeEventListener('abort', onStop);
    abort.abort(WAIT_OVER);
  }
}

/**
 * Produce (key 0): appends each partition's record batches to its log.
 *
 * Answers: one entry per topic and partition of the request, in request order, and
 * nothing else (librdkafka rejects a response that does not echo its request).
 * acks=0 sends no response at all; acks=1 and acks=-1 are answered once
 * PartitionLog.append resolves, that is once the topic's flush policy
 * (flush.messages, 1 = fsync every append) says the batch may be acknowledged — on a
 * single node with no followers the two mean the same, save that acks=-1 on a topic
 * whose min.insync.replicas is above 1 (the one replica) is NOT_ENOUGH_REPLICAS, as
 * Kafka answers it, before anything is appended. Other acks values:
 * INVALID_REQUIRED_ACKS. A partition whose append cannot be written (a full disk)
 * answers KAFKA_STORAGE_ERROR, which clients retry; the others in the request are
 * answered as usual and the connection stays open.
 *
 * Idempotent producers (batches with a producer id): each batch is checked against
 * the partition's ProducerState before it is appended. A duplicate of one of the
 * producer's last five batches is answered with its original base offset and not
 * appended; a gap is OUT_OF_ORDER_SEQUENCE_NUMBER, an old epoch
 * INVALID_PRODUCER_EPOCH. Check, append and state update happen in one synchronous
 * step per batch, so concurrent requests cannot interleave between them.
 * Transactional batches: the producer must be the current one of its transactional
 * id (else INVALID_PRODUCER_EPOCH, which transactional clients take as fenced, or
 * INVALID_PRODUCER_ID_MAPPING) and the partition must be in its open transaction
 * (AddPartitionsToTxn, else INVALID_TXN_STATE), so no record is written outside a
 * transaction the coordinator will end; the batch then opens the producer's
 * transaction in the partition's producer state (which gives the LSO). Control
 * batches are written only by the coordinator: from a client they are INVALID_RECORD.
 *
 * Versions: v10 (KIP-951) answers a partition refused with NOT_LEADER_OR_FOLLOWER or
 * FENCED_LEADER_EPOCH (here: its log closed under the append, the topic being deleted
 * or the broker stopping) with the partition's current leader, and the endpoints of
 * the leaders named, as Kafka's handleProduceRequest does: this node at LEADER_EPOCH
 * while the topic still has the partition, else leader -1, epoch -1 and no endpoint.
 * v11 (KIP-890 part 1) says the client knows TRANSACTION_ABORTABLE: a transactional
 * batch for a partition not added to the producer's ongoing transaction is answered
 * TRANSACTION_ABORTABLE, which Kafka's partition verification returns and turns into
 * INVALID_TXN_STATE only for older clients. A transaction being committed or aborted
 * stays INVALID_TXN_STATE at every version. Below v7 a zstd batch is
 * UNSUPPORTED_COMPRESSION_TYPE (KIP-110), as Kafka's ProduceRequest.validateRecords.
 *
 * Frame reuse: the records are a view of the request frame, which the socket server
 * reuses for a later request once this handler's answer is encoded
 * (request-router.ts). So nothing may keep a view of them past the answer: whatever
 * must outlive it is copied. Today nothing reads them after the handler returns at
 * all: each append (validation, offsets stamped in place, one write(2)) runs before
 * the handler's first await, and the log keeps only offsets and positions.
 */

import type { Message } from '../../protocol/codec.ts';
import { CompressionCodec } from '../../protocol/compression.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import {
  ATTR_CODEC_MASK,
  ATTR_CONTROL,
  ATTR_TRANSACTIONAL,
  batchAttributes,
  batchRecordCount,
  CorruptRecordError,
  checkBatch,
  PRODUCER_ID,
  readBatchHeader,
  readInt64,
} from '../../protocol/record-batch.ts';
import { LogError, type RecordError } from '../log/errors.ts';
import { LEADER_EPOCH, type PartitionLog } from '../log/partition-log.ts';
import { NO_PRODUCER_ID, type ProducerState } from '../producer/producer-state.ts';
import type { BrokerServices } from './broker-services.ts';
import type { RequestHandler } from './handler.ts';

interface PartitionAnswer {
  index: number;
  errorCode: number;
  baseOffset: number;
  logAppendTimeMs: number;
  logStartOffset: number;
  recordErrors: Array<{ batchIndex: number; batchIndexErrorMessage: string | null }>;
  errorMessage: string | null;
  /** v10+, tagged: set only with NOT_LEADER_OR_FOLLOWER / FENCED_LEADER_EPOCH. */
  currentLeader?: { leaderId: number; leaderEpoch: number };
}

/** First version whose client knows TRANSACTION_ABORTABLE (KIP-890 part 1). */
const TRANSACTION_ABORTABLE_FROM = 11;
/** First version answering the current leader with leadership errors (KIP-951). */
const CURRENT_LEADER_FROM = 10;
/** First version whose client may send zstd batches (KIP-110). */
const ZSTD_FROM = 7;

export const handleProduce: RequestHandler<BrokerServices> = async (body, context, services) => {
  const acks = body.acks as number;
  const validAcks = acks === 0 || acks === 1 || acks === -1;
  const topics: Array<{ name: string; answers: Array<Promise<PartitionAnswer>> }> = [];
  for (const topic of body.topicData as Message[]) {
    const answers: Array<Promise<PartitionAnswer>> = [];
    for (const p of topic.partitionData as Message[]) {
      answers.push(
        validAcks
          ? appendPartition(
              services,
              context.apiVersion,
              body.transactionalId,
              acks,
              topic.name,
              p.index,
              p.records,
            )
          : Promise.resolve(
              failure(p.index, ErrorCode.INVALID_REQUIRED_ACKS, `acks=${acks} is not 0, 1 or -1`),
            ),
      );
    }
    topics.push({ name: topic.name, answers });
  }
  if (acks === 0) {
    // No response; failures are only logged (the client asked not to hear about them).
    for (const t of topics)
      for (const a of t.answers)
        void a.then((r) => {
          if (r.errorCode !== 0)
            services.logger.debug(
              { topic: t.name, partition: r.index, error: r.errorMessage },
              'acks=0 produce failed',
            );
        });
    return null;
  }
  // Every append ran above; what is awaited now is the flush policy (Kafka's purgatory).
  const waitStart = performance.now();
  services.metrics?.purgatoryEntered?.('Produce');
  const responses: Message[] = [];
  try {
    for (const t of topics)
      responses.push({ name: t.name, partitionResponses: await Promise.all(t.answers) });
  } finally {
    services.metrics?.purgatoryLeft?.('Produce');
  }
  services.metrics?.recordRemoteTime?.('Produce', performance.now() - waitStart);
  if (context.apiVersion < CURRENT_LEADER_FROM) return { responses, throttleTimeMs: 0 };
  return { responses, throttleTimeMs: 0, nodeEndpoints: nameCurrentLeaders(services, responses) };
};

/**
 * v10+: sets the current leader on each partition refused for leadership and returns
 * the endpoints of the leaders so named (this node, when the partition still exists).
 */
function nameCurrentLeaders(services: BrokerServices, responses: Message[]): Message[] {
  let leaderNamed = false;
  for (const t of responses) {
    const topic = services.logs.topic(t.name);
    for (const p of t.partitionResponses as PartitionAnswer[]) {
      if (
        p.errorCode !== ErrorCode.NOT_LEADER_OR_FOLLOWER &&
        p.errorCode !== ErrorCode.FENCED_LEADER_EPOCH
      )
        continue;
      const exists = topic !== undefined && p.index >= 0 && p.index < topic.partitions;
      p.currentLeader = exists
        ? { leaderId: services.nodeId, leaderEpoch: LEADER_EPOCH }
        : { leaderId: -1, leaderEpoch: -1 };
      leaderNamed ||= exists;
    }
  }
  if (!leaderNamed) return [];
  return [
    { nodeId: services.nodeId, host: services.advertisedHost, port: services.port, rack: null },
  ];
}

function failure(
  index: number,
  errorCode: number,
  errorMessage: string,
  logStartOffset = -1,
  recordErrors: readonly RecordError[] = [],
): PartitionAnswer {
  return {
    index,
    errorCode,
    baseOffset: -1,
    logAppendTimeMs: -1,
    logStartOffset,
    // v8+: the records the batch was refused for, so the client fails only those.
    recordErrors: recordErrors.map((e) => ({
      batchIndex: e.batchIndex,
      batchIndexErrorMessage: e.message,
    })),
    errorMessage,
  };
}

/** Starts the append synchronously (so appends keep request order) and resolves with the answer. */
function appendPartition(
  services: BrokerServices,
  apiVersion: number,
  transactionalId: string | null,
  acks: number,
  topic: string,
  partition: number,
  records: Buffer | null,
): Promise<PartitionAnswer> {
  let log: PartitionLog;
  try {
    log = services.logs.getLog(topic, partition);
  } catch (e) {
    if (e instanceof LogError)
      return Promise.resolve(
        failure(partition, ErrorCode[e.kafkaError], e.message, -1, e.recordErrors),
      );
    throw e;
  }
  // This node is every partition's only replica: its ISR is 1, as Kafka checks acks=all.
  if (acks === -1 && log.config.minInsyncReplicas > 1) {
    return Promise.resolve(
      failure(
        partition,
        ErrorCode.NOT_ENOUGH_REPLICAS,
        `The size of the current ISR : 1 is insufficient to satisfy the min.isr requirement of ${log.config.minInsyncReplicas} for partition ${topic}-${partition}`,
        log.logStartOffset,
      ),
    );
  }
  if (records === null || records.length === 0) {
    return Promise.resolve(
      failure(partition, ErrorCode.CORRUPT_MESSAGE, 'no record batches', log.logStartOffset),
    );
  }
  const plan = planBatches(records);
  if (typeof plan === 'string') {
    return Promise.resolve(failure(partition, ErrorCode.CORRUPT_MESSAGE, plan, log.logStartOffset));
  }
  if (
    apiVersion < ZSTD_FROM &&
    plan.batches.some(
      (b) => (batchAttributes(records, b.position) & ATTR_CODEC_MASK) === CompressionCodec.zstd,
    )
  ) {
    return Promise.resolve(
      failure(
        partition,
        ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
        `Produce requests with version ${apiVersion} are not allowed to use ZStandard compression`,
        log.logStartOffset,
      ),
    );
  }
  if (plan.control) {
    return Promise.resolve(
      failure(
        partition,
        ErrorCode.INVALID_RECORD,
        'clients may not write control batches',
        log.logStartOffset,
      ),
    );
  }
  if (plan.transactional) {
    const refused = checkTransactional(
      services,
      apiVersion,
      transactionalId,
      topic,
      partition,
      records,
      plan.batches,
    );
    if (refused !== undefined) {
      return Promise.resolve(failure(partition, refused.code, refused.message, log.logStartOffset));
    }
  }
  // Counted when the append starts, as Kafka counts BytesIn/MessagesIn per append.
  if (services.metrics !== undefined) {
    const traffic = services.metrics.topic(topic);
    traffic.bytesIn += records.length;
    for (const b of plan.batches) traffic.messagesIn += batchRecordCount(records, b.position);
  }
  if (!plan.idempotent) return settle(log, partition, log.append(records));
  return appendIdempotent(services, log, partition, records, plan.batches);
}

/** Why a transactional produce may not be appended, or undefined when it may. */
function checkTransactional(
  services: BrokerServices,
  apiVersion: number,
  transactionalId: string | null,
  topic: string,
  partition: number,
  records: Buffer,
  batches: Array<{ position: number; size: number }>,
): { code: number; message: string } | undefined {
  for (const { position } of batches) {
    const h = readBatchHeader(records, position);
    if (!h.transactional || h.producerId === NO_PRODUCER_ID) {
      return {
        code: ErrorCode.INVALID_RECORD,
        message: 'transactional and other batches mixed, or no producer id',
      };
    }
    const error = services.transactions.checkPartition(
      transactionalId,
      h.producerId,
      h.producerEpoch,
      {
        topic,
        partition,
      },
    );
    if (error === 'NONE') continue;
    const name =
      error === 'PRODUCER_FENCED'
        ? 'INVALID_PRODUCER_EPOCH'
        : error === 'INVALID_TXN_STATE' &&
            apiVersion >= TRANSACTION_ABORTABLE_FROM &&
            !beingCompleted(services, transactionalId, h.producerId)
          ? 'TRANSACTION_ABORTABLE'
          : error;
    return {
      code: ErrorCode[name],
      message: `producer ${h.producerId} epoch ${h.producerEpoch} may not write to ${topic}-${partition} in a transaction: ${name}`,
    };
  }
  return undefined;
}

/** Whether the producer's transaction is being committed or aborted (PrepareCommit/PrepareAbort). */
function beingCompleted(
  services: BrokerServices,
  transactionalId: string | null,
  producerId: number,
): boolean {
  const meta =
    transactionalId === null
      ? services.transactions.all().find((m) => m.producerId === producerId)
      : services.transactions.describe(transactionalId);
  return meta?.state === 'PrepareCommit' || meta?.state === 'PrepareAbort';
}

interface BatchPlan {
  batches: Array<{ position: number; size: number }>;
  idempotent: boolean;
  transactional: boolean;
  control: boolean;
}

/** Batch boundaries and kinds, from the headers only (the log validates CRCs on append). */
function planBatches(records: Buffer): BatchPlan | string {
  const batches: Array<{ position: number; size: number }> = [];
  let idempotent = false;
  let transactional = false;
  let control = false;
  let pos = 0;
  while (pos < records.length) {
    const size = checkBatch(records, pos, records.length, false);
    if (size instanceof CorruptRecordError) return `batch at byte ${pos}: ${size.message}`;
    if (readInt64(records, pos + PRODUCER_ID) !== NO_PRODUCER_ID) idempotent = true;
    if ((batchAttributes(records, pos) & ATTR_TRANSACTIONAL) !== 0) transactional = true;
    if ((batchAttributes(records, pos) & ATTR_CONTROL) !== 0) control = true;
    batches.push({ position: pos, size });
    pos += size;
  }
  return { batches, idempotent, transactional, control };
}

async function settle(
  log: PartitionLog,
  partition: number,
  appended: Promise<{ baseOffset: number; logAppendTime: number; logStartOffset: number }>,
): Promise<PartitionAnswer> {
  try {
    const r = await appended;
    return {
      index: partition,
      errorCode: 0,
      baseOffset: r.baseOffset,
      logAppendTimeMs: r.logAppendTime,
      logStartOffset: r.logStartOffset,
      recordErrors: [],
      errorMessage: null,
    };
  } catch (e) {
    if (e instanceof LogError)
      return failure(
        partition,
        ErrorCode[e.kafkaError],
        e.message,
        log.logStartOffset,
        e.recordErrors,
      );
    throw e;
  }
}

/**
 * Each batch in turn: check its sequence, then append it or answer the duplicate.
 * Producers send one batch per partition per request, so the answer describes the
 * first batch's base offset, as Kafka does.
 */
async function appendIdempotent(
  services: BrokerServices,
  log: PartitionLog,
  partition: number,
  records: Buffer,
  batches: Array<{ position: number; size: number }>,
): Promise<PartitionAnswer> {
  const state: ProducerState = services.producerStates.stateFor(log);
  const pending: Array<Promise<PartitionAnswer>> = [];
  for (const { position, size } of batches) {
    const h = readBatchHeader(records, position);
    const identity = {
      producerId: h.producerId,
      producerEpoch: h.producerEpoch,
      baseSequence: h.baseSequence,
      lastOffsetDelta: h.lastOffsetDelta,
    };
    const check = state.check(identity);
    if (check.kind === 'error') {
      pending.push(
        Promise.resolve(
          failure(partition, ErrorCode[check.error], check.message, log.logStartOffset),
        ),
      );
      break;
    }
    if (check.kind === 'duplicate') {
      services.logger.debug(
        {
          topic: log.topic,
          partition,
          producerId: h.producerId,
          sequence: h.baseSequence,
          offset: check.firstOffset,
        },
        'duplicate batch answered with its original offset',
      );
      pending.push(
        Promise.resolve({
          index: partition,
          errorCode: 0,
          baseOffset: check.firstOffset,
          logAppendTimeMs: -1,
          logStartOffset: log.logStartOffset,
          recordErrors: [],
          errorMessage: null,
        }),
      );
      continue;
    }
    const before = log.logEndOffset;
    const appended = log.append(records.subarray(position, position + size));
    // append() validated and wrote synchronously: the log grew exactly when it succeeded.
    if (log.logEndOffset > before)
      state.onAppend(identity, before, services.clock.now(), h.transactional);
    pending.push(settle(log, partition, appended));
  }
  const answers = await Promise.all(pending);
  return answers.find((a) => a.errorCode !== 0) ?? answers[0]!;
}

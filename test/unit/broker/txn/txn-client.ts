/**
 * Transactional requests over a RawClient, for broker tests that drive the
 * coordinator step by step (what a client library does, without its retries).
 */
import { ApiKey } from '../../../../src/protocol/api-keys.ts';
import type { Message } from '../../../../src/protocol/codec.ts';
import { encodeBatch } from '../../../../src/protocol/record-batch.ts';
import type { RawClient } from '../server/raw-client.ts';

export interface TxnProducer {
  transactionalId: string;
  producerId: bigint;
  producerEpoch: number;
}

export async function initTxn(
  c: RawClient,
  transactionalId: string,
  transactionTimeoutMs = 60_000,
  version = 1,
  extra: Record<string, unknown> = {},
): Promise<TxnProducer & { errorCode: number }> {
  const res = await c.request(ApiKey.InitProducerId, version, {
    transactionalId,
    transactionTimeoutMs,
    ...extra,
  });
  return {
    transactionalId,
    producerId: res.producerId,
    producerEpoch: res.producerEpoch,
    errorCode: res.errorCode,
  };
}

/** AddPartitionsToTxn; resolves with the error code of each partition, in request order. */
export async function addPartitions(
  c: RawClient,
  p: TxnProducer,
  topic: string,
  partitions: number[],
  version = 1,
): Promise<number[]> {
  const res = await c.request(ApiKey.AddPartitionsToTxn, version, {
    transactionalId: p.transactionalId,
    producerId: p.producerId,
    producerEpoch: p.producerEpoch,
    topics: [{ name: topic, partitions }],
  });
  return res.results.flatMap((t: Message) => t.results.map((r: Message) => r.errorCode));
}

export async function addOffsets(
  c: RawClient,
  p: TxnProducer,
  groupId: string,
  version = 1,
): Promise<number> {
  const res = await c.request(ApiKey.AddOffsetsToTxn, version, {
    transactionalId: p.transactionalId,
    producerId: p.producerId,
    producerEpoch: p.producerEpoch,
    groupId,
  });
  return res.errorCode;
}

export async function endTxn(
  c: RawClient,
  p: TxnProducer,
  committed: boolean,
  version = 1,
): Promise<number> {
  const res = await c.request(ApiKey.EndTxn, version, {
    transactionalId: p.transactionalId,
    producerId: p.producerId,
    producerEpoch: p.producerEpoch,
    committed,
  });
  return res.errorCode;
}

export async function txnOffsetCommit(
  c: RawClient,
  p: TxnProducer,
  groupId: string,
  topic: string,
  offset: number,
  version = 1,
): Promise<number> {
  const res = await c.request(ApiKey.TxnOffsetCommit, version, {
    transactionalId: p.transactionalId,
    groupId,
    producerId: p.producerId,
    producerEpoch: p.producerEpoch,
    topics: [
      {
        name: topic,
        partitions: [
          { partitionIndex: 0, committedOffset: BigInt(offset), committedMetadata: null },
        ],
      },
    ],
  });
  return res.topics[0].partitions[0].errorCode;
}

/** Produces one transactional batch; resolves with the partition's answer. */
export async function produceTxn(
  c: RawClient,
  p: TxnProducer,
  topic: string,
  partition: number,
  values: string[],
  baseSequence: number,
): Promise<Message> {
  const records = encodeBatch({
    records: values.map((v) => ({ timestamp: 1000, key: Buffer.from('k'), value: Buffer.from(v) })),
    producerId: Number(p.producerId),
    producerEpoch: p.producerEpoch,
    baseSequence,
    transactional: true,
  });
  const res = await c.request(ApiKey.Produce, 7, {
    transactionalId: p.transactionalId,
    acks: -1,
    timeoutMs: 1000,
    topicData: [{ name: topic, partitionData: [{ index: partition, records }] }],
  });
  return res.responses[0].partitionResponses[0];
}

export async function listLatest(
  c: RawClient,
  topic: string,
  isolationLevel: number,
): Promise<bigint> {
  const res = await c.request(ApiKey.ListOffsets, 2, {
    replicaId: -1,
    isolationLevel,
    topics: [{ name: topic, partitions: [{ partitionIndex: 0, timestamp: -1n }] }],
  });
  return res.topics[0].partitions[0].offset;
}

export async function createTopic(c: RawClient, name: string, numPartitions = 1): Promise<void> {
  const res = await c.request(ApiKey.CreateTopics, 4, {
    topics: [{ name, numPartitions, replicationFactor: 1, assignments: [], configs: [] }],
    timeoutMs: 1000,
    validateOnly: false,
  });
  if (res.topics[0].errorCode !== 0)
    throw new Error(`CreateTopics ${name}: ${res.topics[0].errorCode}`);
}

/**
 * Record keys and values of the `__transaction_state` topic, in Kafka's layout
 * (TransactionLogKey.json / TransactionLogValue.json, version 0, non-flexible), so
 * tools that decode that topic see what they expect. Big-endian:
 *
 *   key   v0: version i16 = 0, transactionalId string
 *   value v0: version i16 = 0, producerId i64, producerEpoch i16, timeoutMs i32,
 *             status i8 (transaction-metadata.ts), partitions nullable
 *             [topic string, partitionIds [i32]], lastUpdateTimestampMs i64,
 *             startTimestampMs i64
 *
 * The in-memory KIP-360 fields (lastProducerEpoch, previousProducerId) are not
 * written, as Kafka does not write them in v0; they read back as -1.
 *
 * A null value (tombstone) removes an expired transactional id. Values of other
 * versions are refused (undefined): a data directory from a newer Kafka is not read
 * as if it were this one.
 */
import { Reader } from '../../protocol/reader.ts';
import { Writer } from '../../protocol/writer.ts';
import {
  type TopicPartition,
  type TransactionMetadata,
  TXN_STATUS_BY_ID,
  TXN_STATUS_IDS,
} from './transaction-metadata.ts';

export function encodeTxnKey(transactionalId: string): Buffer {
  const w = new Writer(32);
  w.int16(0);
  w.string(transactionalId);
  return w.finish();
}

export function decodeTxnKey(bytes: Buffer): string | undefined {
  const r = new Reader(bytes);
  const version = r.int16();
  const id = r.string();
  return r.ok && version === 0 ? id : undefined;
}

export function encodeTxnValue(m: TransactionMetadata): Buffer {
  const w = new Writer(128);
  w.int16(0);
  w.int64(BigInt(m.producerId));
  w.int16(m.producerEpoch);
  w.int32(m.timeoutMs);
  w.int8(TXN_STATUS_IDS[m.state]);
  const byTopic = new Map<string, number[]>();
  for (const p of m.partitions) {
    const list = byTopic.get(p.topic) ?? [];
    list.push(p.partition);
    byTopic.set(p.topic, list);
  }
  w.int32(byTopic.size);
  for (const [topic, ids] of byTopic) {
    w.string(topic);
    w.int32(ids.length);
    for (const id of ids) w.int32(id);
  }
  w.int64(BigInt(m.lastUpdateTimestamp));
  w.int64(BigInt(m.txnStartTimestamp));
  return w.finish();
}

export function decodeTxnValue(
  transactionalId: string,
  bytes: Buffer,
): TransactionMetadata | undefined {
  const r = new Reader(bytes);
  const version = r.int16();
  const producerId = Number(r.int64());
  const producerEpoch = r.int16();
  const timeoutMs = r.int32();
  const state = TXN_STATUS_BY_ID[r.int8()];
  const partitions: TopicPartition[] = [];
  const topics = r.int32();
  for (let i = 0; i < topics && r.ok; i++) {
    const topic = r.string();
    const n = r.int32();
    for (let j = 0; j < n && r.ok; j++) partitions.push({ topic, partition: r.int32() });
  }
  const lastUpdateTimestamp = Number(r.int64());
  const txnStartTimestamp = Number(r.int64());
  if (!r.ok || version !== 0 || state === undefined) return undefined;
  return {
    transactionalId,
    producerId,
    producerEpoch,
    timeoutMs,
    state,
    partitions,
    txnStartTimestamp,
    lastUpdateTimestamp,
    // Not in the value (Kafka's v0 has neither): what Kafka's loader sets.
    lastProducerEpoch: -1,
    previousProducerId: -1,
  };
}

/**
 * The transaction log: Kafka's compacted internal topic `__transaction_state`, one
 * record per state change of a transactional id (key and value in
 * transaction-log-format.ts), so compaction keeps the latest state of each id and a
 * tombstone removes an expired one. An id always lands on partition
 * `abs(hashCode(transactionalId)) % partitions`, so its records stay in order.
 *
 * The topic is created on first use (the first transactional producer), as Kafka
 * does, with transaction.state.log.num.partitions partitions; an existing topic keeps
 * its partition count.
 *
 * Durability: `write` resolves once the append is durable under the topic's flush
 * policy; the coordinator changes its in-memory state only afterwards, so nothing a
 * client was told can be lost by a restart. `load` replays every partition from its
 * start at broker start.
 *
 * Single-threaded: used by the TransactionCoordinator on the broker thread.
 */
import { decodeRecords, encodeBatch } from '../../protocol/record-batch.ts';
import type { Clock } from '../../util/clock.ts';
import { offsetsPartitionFor } from '../group/offsets-topic-format.ts';
import type { LogManager } from '../log/log-manager.ts';
import { replayPartition } from '../log/replay.ts';
import {
  decodeTxnKey,
  decodeTxnValue,
  encodeTxnKey,
  encodeTxnValue,
} from './transaction-log-format.ts';
import type { TransactionMetadata } from './transaction-metadata.ts';

export const TRANSACTION_STATE_TOPIC = '__transaction_state';

export interface TransactionLogOptions {
  partitions: number;
  segmentBytes: number;
  clock: Clock;
}

/** What the coordinator stores its state in; the broker uses TransactionLogStore. */
export interface TransactionStore {
  write(meta: TransactionMetadata): Promise<void>;
  remove(transactionalId: string): Promise<void>;
}

export class TransactionLogStore implements TransactionStore {
  constructor(
    private readonly logs: LogManager,
    private readonly options: TransactionLogOptions,
  ) {}

  private get partitions(): number {
    return this.logs.topic(TRANSACTION_STATE_TOPIC)?.partitions ?? this.options.partitions;
  }

  /** The latest state of every transactional id in the log (none when the topic does not exist). */
  load(): Map<string, TransactionMetadata> {
    const out = new Map<string, TransactionMetadata>();
    if (!this.logs.topic(TRANSACTION_STATE_TOPIC)) return out;
    for (let partition = 0; partition < this.partitions; partition++) {
      const log = this.logs.getLog(TRANSACTION_STATE_TOPIC, partition);
      for (const { records, position } of replayPartition(log)) {
        for (const record of decodeRecords(records, position)) {
          if (record.offset < log.earliestOffset() || record.key === null) continue;
          const id = decodeTxnKey(record.key);
          if (id === undefined) continue;
          if (record.value === null) {
            out.delete(id);
            continue;
          }
          const meta = decodeTxnValue(id, record.value);
          if (meta) out.set(id, meta);
        }
      }
    }
    return out;
  }

  write(meta: TransactionMetadata): Promise<void> {
    return this.append(meta.transactionalId, encodeTxnValue(meta));
  }

  remove(transactionalId: string): Promise<void> {
    return this.append(transactionalId, null);
  }

  private async append(transactionalId: string, value: Buffer | null): Promise<void> {
    if (!this.logs.topic(TRANSACTION_STATE_TOPIC)) {
      this.logs.createTopic(TRANSACTION_STATE_TOPIC, this.options.partitions, {
        'cleanup.policy': 'compact',
        'segment.bytes': String(this.options.segmentBytes),
      });
    }
    // Same partitioning as __consumer_offsets: Kafka's abs(String.hashCode) % partitions.
    const partition = offsetsPartitionFor(transactionalId, this.partitions);
    const records = [
      { key: encodeTxnKey(transactionalId), value, timestamp: this.options.clock.now() },
    ];
    await this.logs.getLog(TRANSACTION_STATE_TOPIC, partition).append(encodeBatch({ records }));
  }
}

/**
 * The GroupStore on the compacted internal topic `__consumer_offsets`, as Kafka keeps
 * it: one record per committed offset and one per group's membership snapshot, keyed
 * so that compaction keeps only the latest of each, tombstones for deletions; a
 * consumer group (KIP-848) has records of its own (consumer-group-records.ts), written
 * and replayed by the ConsumerGroupCoordinator's journal. A group always lands on
 * partition `abs(hashCode(groupId)) % partitions`, so its records stay in order.
 *
 * Durability: a commit is acknowledged to the client only after the append resolved,
 * i.e. when the topic's flush policy says it is durable (the same policy as every
 * other topic). On start, `loadInto` reads every partition from its start and replays
 * the records into the coordinator, so offsets and generations survive a restart.
 *
 * Transactional offset commits (TxnOffsetCommit) are written as a transactional batch
 * of the producer (producer id and epoch, no sequence), as Kafka's coordinator does;
 * the transaction coordinator later writes the COMMIT or ABORT marker to the same
 * partition. Loading replays them in log order: a transactional batch's offsets are
 * pending for its producer, and the producer's next marker commits or drops them.
 * Every offset carries its batch's offset in this topic, live (the append's base
 * offset) and loaded (the batch header's) alike, so a committed transaction's offset
 * replaces a plain one only if written after it, with the same answer both ways.
 *
 * Single-threaded: used by the GroupCoordinator on the broker thread.
 */
import { readMarker } from '../../protocol/control-record.ts';
import { decodeRecords, encodeBatch, type RecordInput } from '../../protocol/record-batch.ts';
import type { Clock } from '../../util/clock.ts';
import type { Logger } from '../../util/logger.ts';
import type { LogManager } from '../log/log-manager.ts';
import { replayPartition } from '../log/replay.ts';
import type {
  GroupCoordinator,
  GroupSnapshot,
  GroupStore,
  OffsetCommitEntry,
} from './group-coordinator.ts';
import {
  decodeGroupValue,
  decodeKey,
  decodeOffsetValue,
  encodeGroupKey,
  encodeGroupValue,
  encodeOffsetKey,
  encodeOffsetValue,
  offsetsPartitionFor,
} from './offsets-topic-format.ts';

export const OFFSETS_TOPIC = '__consumer_offsets';

export interface OffsetsTopicOptions {
  partitions: number;
  segmentBytes: number;
  clock: Clock;
  logger: Logger;
}

export class OffsetsTopicStore implements GroupStore {
  private readonly partitions: number;

  private constructor(
    private readonly logs: LogManager,
    private readonly options: OffsetsTopicOptions,
  ) {
    // An existing topic keeps its partition count: groups must stay where they are.
    this.partitions = logs.topic(OFFSETS_TOPIC)?.partitions ?? options.partitions;
  }

  static open(logs: LogManager, options: OffsetsTopicOptions): OffsetsTopicStore {
    if (!logs.topic(OFFSETS_TOPIC)) {
      logs.createTopic(OFFSETS_TOPIC, options.partitions, {
        'cleanup.policy': 'compact',
        'segment.bytes': String(options.segmentBytes),
      });
    }
    return new OffsetsTopicStore(logs, options);
  }

  /** Replays every partition into the coordinator. */
  loadInto(coordinator: GroupCoordinator): {
    offsets: number;
    groups: number;
    consumerGroups: number;
  } {
    let offsets = 0;
    let groups = 0;
    let consumerGroupRecords = 0;
    for (let partition = 0; partition < this.partitions; partition++) {
      const log = this.logs.getLog(OFFSETS_TOPIC, partition);
      for (const { header, records, position } of replayPartition(log)) {
        if (header.control) {
          const marker = readMarker(records, position);
          if (marker && header.baseOffset >= log.earliestOffset()) {
            coordinator.completeTxnOffsets(header.producerId, marker.commit);
          }
          continue;
        }
        for (const record of decodeRecords(records, position)) {
          if (record.offset < log.earliestOffset() || record.key === null) continue;
          const key = decodeKey(record.key);
          if (!key) {
            const replayed = coordinator.consumerGroups.replayRecord(record.key, record.value);
            if (replayed === 'applied') consumerGroupRecords++;
            else if (replayed === 'malformed') {
              this.options.logger.warn(
                { partition, offset: record.offset },
                'skipped a consumer group record whose value does not decode',
              );
            }
            continue;
          }
          if (key.kind === 'offset' && header.transactional) {
            const value = record.value === null ? undefined : decodeOffsetValue(record.value);
            if (value) {
              coordinator.restorePendingTxnOffset(header.producerId, key.groupId, {
                topic: key.topic,
                partition: key.partition,
                offset: value.offset,
                leaderEpoch: value.leaderEpoch,
                metadata: value.metadata,
                commitTimestamp: value.commitTimestamp,
                logOffset: header.baseOffset,
              });
            }
            continue;
          }
          if (key.kind === 'offset') {
            if (record.value === null) {
              coordinator.removeRestoredOffset(key.groupId, key.topic, key.partition);
              continue;
            }
            const value = decodeOffsetValue(record.value);
            if (!value) continue;
            coordinator.restoreOffset(key.groupId, {
              topic: key.topic,
              partition: key.partition,
              offset: value.offset,
              leaderEpoch: value.leaderEpoch,
              metadata: value.metadata,
              commitTimestamp: value.commitTimestamp,
              logOffset: header.baseOffset,
            });
            offsets++;
          } else if (record.value === null) {
            coordinator.forgetRestoredGroup(key.groupId);
          } else {
            const snapshot = decodeGroupValue(key.groupId, record.value);
            if (snapshot) {
              coordinator.restoreGroup(snapshot);
              groups++;
            }
          }
        }
      }
    }
    const consumerGroups = coordinator.consumerGroups.completeLoad();
    this.options.logger.info(
      { offsets, groups, consumerGroups, consumerGroupRecords },
      'loaded committed offsets and groups',
    );
    return { offsets, groups, consumerGroups };
  }

  async storeOffsets(
    groupId: string,
    offsets: Array<OffsetCommitEntry & { commitTimestamp: number }>,
  ): Promise<number> {
    return this.append(
      groupId,
      offsets.map((o) => ({
        key: encodeOffsetKey(groupId, o.topic, o.partition),
        value: encodeOffsetValue(o),
      })),
    );
  }

  async removeOffsets(
    groupId: string,
    partitions: Array<{ topic: string; partition: number }>,
  ): Promise<void> {
    if (partitions.length === 0) return;
    await this.append(
      groupId,
      partitions.map((p) => ({ key: encodeOffsetKey(groupId, p.topic, p.partition), value: null })),
    );
  }

  async storeTxnOffsets(
    groupId: string,
    producerId: number,
    producerEpoch: number,
    offsets: Array<OffsetCommitEntry & { commitTimestamp: number }>,
  ): Promise<number> {
    return this.append(
      groupId,
      offsets.map((o) => ({
        key: encodeOffsetKey(groupId, o.topic, o.partition),
        value: encodeOffsetValue(o),
      })),
      { producerId, producerEpoch, baseSequence: -1, transactional: true },
    );
  }

  async storeGroup(snapshot: GroupSnapshot): Promise<void> {
    const now = this.options.clock.now();
    await this.append(snapshot.groupId, [
      { key: encodeGroupKey(snapshot.groupId), value: encodeGroupValue(snapshot, now) },
    ]);
  }

  async removeGroup(groupId: string): Promise<void> {
    await this.append(groupId, [{ key: encodeGroupKey(groupId), value: null }]);
  }

  /** A consumer group's changed records (and tombstones), in one batch: all or none. */
  async storeConsumerGroupRecords(
    groupId: string,
    records: Array<{ key: Buffer; value: Buffer | null }>,
  ): Promise<void> {
    await this.append(groupId, records);
  }

  private async append(
    groupId: string,
    entries: Array<{ key: Buffer; value: Buffer | null }>,
    producer?: {
      producerId: number;
      producerEpoch: number;
      baseSequence: number;
      transactional: boolean;
    },
  ): Promise<number> {
    // Callers pass at least one entry (validated offsets, a snapshot, a tombstone).
    if (entries.length === 0) throw new Error('an empty append to __consumer_offsets');
    const now = this.options.clock.now();
    const records: RecordInput[] = entries.map((e) => ({
      key: e.key,
      value: e.value,
      timestamp: now,
    }));
    const partition = offsetsPartitionFor(groupId, this.partitions);
    const appended = await this.logs
      .getLog(OFFSETS_TOPIC, partition)
      .append(encodeBatch({ records, ...producer }));
    return appended.baseOffset;
  }
}

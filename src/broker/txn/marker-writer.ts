/**
 * Writes the COMMIT or ABORT marker of a transaction to every partition in it (what
 * Kafka's coordinator does through WriteTxnMarkers; on a single node the logs are
 * local). Each marker is a control batch (src/protocol/control-record.ts) appended
 * like any batch, after which the partition's producer state closes the transaction
 * and, for an abort, indexes it; both happen in the same synchronous step as the
 * append, so no read sees the marker without its effect on the LSO. Markers on
 * `__consumer_offsets` partitions also settle the transaction's pending offset
 * commits (TxnOffsetCommit) in the group coordinator.
 *
 * A partition whose topic was deleted meanwhile is skipped (there is nothing left to
 * mark). `write` resolves when every marker is durable under its topic's flush
 * policy, and rejects if one could not be appended; the coordinator then keeps the
 * transaction in its Prepare state and tries again later. Writing a marker twice is
 * harmless: the second closes nothing.
 *
 * Crash tests stop a transaction between two of its markers through
 * marker-stall-hook.ts.
 *
 * Single-threaded, on the broker thread.
 */
import { encodeMarkerBatch } from '../../protocol/control-record.ts';
import type { Clock } from '../../util/clock.ts';
import type { Logger } from '../../util/logger.ts';
import { OFFSETS_TOPIC } from '../group/offsets-topic-store.ts';
import { LogError } from '../log/errors.ts';
import type { LogManager } from '../log/log-manager.ts';
import type { PartitionLog } from '../log/partition-log.ts';
import type { ProducerStateStore } from '../producer/producer-state-store.ts';
import { type MarkerStallHook, markerStallHookFrom, stalled } from './marker-stall-hook.ts';
import type { TopicPartition } from './transaction-metadata.ts';

/** Where committed or aborted transactional offsets are settled (the group coordinator). */
export interface TxnOffsetsSettler {
  completeTxnOffsets(producerId: number, commit: boolean): void;
}

/** A single node is its own coordinator forever: its coordinator epoch never changes. */
const COORDINATOR_EPOCH = 0;

export interface MarkerWriterOptions {
  logs: LogManager;
  producerStates: ProducerStateStore;
  groups: TxnOffsetsSettler;
  clock: Clock;
  logger: Logger;
  /** Test-only (marker-stall-hook.ts); by default read from CONNECT_TEST_STALL_MARKERS. */
  stallHook?: MarkerStallHook;
}

export class MarkerWriter {
  private readonly stallHook: MarkerStallHook | undefined;

  constructor(private readonly options: MarkerWriterOptions) {
    this.stallHook = options.stallHook ?? markerStallHookFrom(process.env, options.logger);
  }

  async write(
    partitions: readonly TopicPartition[],
    producerId: number,
    producerEpoch: number,
    commit: boolean,
  ): Promise<void> {
    const { logs, producerStates, clock, logger } = this.options;
    const appends: Promise<unknown>[] = [];
    let offsetsMarked = false;
    const limit = this.stallHook?.nextLimit();
    for (const tp of partitions) {
      if (limit !== undefined && appends.length >= limit)
        return stalled(logger, producerId, appends.length);
      let log: PartitionLog;
      try {
        log = logs.getLog(tp.topic, tp.partition);
      } catch (e) {
        if (!(e instanceof LogError) || e.kafkaError !== 'UNKNOWN_TOPIC_OR_PARTITION') throw e;
        logger.info({ ...tp, producerId }, 'no marker for a partition that no longer exists');
        continue;
      }
      const now = clock.now();
      const batch = encodeMarkerBatch({
        producerId,
        producerEpoch,
        commit,
        coordinatorEpoch: COORDINATOR_EPOCH,
        timestamp: now,
      });
      const at = log.logEndOffset;
      appends.push(log.append(batch));
      // append() wrote synchronously when the log grew: the marker is at `at`.
      if (log.logEndOffset > at)
        producerStates.onMarker(log, producerId, producerEpoch, at, commit, now);
      if (tp.topic === OFFSETS_TOPIC) offsetsMarked = true;
    }
    await Promise.all(appends);
    if (offsetsMarked) this.options.groups.completeTxnOffsets(producerId, commit);
  }
}

/**
 * ListOffsets (key 2): -2 the log start offset (earliest), -1 the log end offset
 * (latest) or, with isolation_level 1 (read_committed, v2+), the last stable offset,
 * below which every transaction is decided; any other timestamp
 * the first offset whose record timestamp is at or after it, through the time index
 * (offset -1 when every record is older). v0 answers in the old format: a list of
 * up to maxNumOffsets offsets.
 *
 * Newer queries, as Kafka answers them on a broker without tiered storage:
 * -3 (v7+, KIP-734) the first record with the largest timestamp; -4 (v8+, KIP-405)
 * the local log start offset, which is the log start offset; -5 (v9+, KIP-1005) the
 * last tiered offset, -1 since nothing is tiered. A timestamp lookup (-3 or >= 0)
 * finds only offsets a reader of the isolation level could fetch (below the last
 * stable offset for read_committed), else -1, as Kafka's ReplicaManager filters it.
 * v10's timeout_ms bounds remote lookups, of which there are none.
 *
 * current_leader_epoch (v4+): the single node's partitions are at leader epoch 0
 * (Metadata says so), so a larger epoch is UNKNOWN_LEADER_EPOCH; -1 means none given.
 */
import type { Message } from '../../protocol/codec.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import { LogError } from '../log/errors.ts';
import { LEADER_EPOCH } from '../log/partition-log.ts';
import type { BrokerServices } from './broker-services.ts';
import type { RequestHandler } from './handler.ts';

const LATEST = -1;
const EARLIEST = -2;
const MAX_TIMESTAMP = -3;
const EARLIEST_LOCAL = -4;
const LATEST_TIERED = -5;
const READ_COMMITTED = 1;

export const handleListOffsets: RequestHandler<BrokerServices> = (body, context, services) => {
  const topics = (body.topics as Message[]).map((t) => ({
    name: t.name,
    partitions: (t.partitions as Message[]).map((p) => {
      const answer = {
        partitionIndex: p.partitionIndex,
        errorCode: 0,
        oldStyleOffsets: [] as number[],
        timestamp: -1,
        offset: -1,
        leaderEpoch: LEADER_EPOCH,
      };
      try {
        const log = services.logs.getLog(t.name, p.partitionIndex);
        const epoch = (p.currentLeaderEpoch as number | undefined) ?? -1;
        if (epoch > LEADER_EPOCH) {
          answer.errorCode = ErrorCode.UNKNOWN_LEADER_EPOCH;
          return answer;
        }
        const ts = Number(p.timestamp);
        const v = context.apiVersion;
        const lastFetchable =
          body.isolationLevel === READ_COMMITTED
            ? services.producerStates.lastStableOffset(log)
            : log.latestOffset();
        let found: { offset: number; timestamp: number } | undefined;
        if (ts === LATEST) found = { offset: lastFetchable, timestamp: -1 };
        else if (ts === EARLIEST || (ts === EARLIEST_LOCAL && v >= 8))
          found = { offset: log.earliestOffset(), timestamp: -1 };
        else if (ts === LATEST_TIERED && v >= 9) found = { offset: -1, timestamp: -1 };
        else if (ts >= 0 || (ts === MAX_TIMESTAMP && v >= 7)) {
          found = ts >= 0 ? log.offsetForTimestamp(ts) : log.maxTimestampOffset();
          if (found !== undefined && found.offset >= lastFetchable) found = undefined;
        } else {
          answer.errorCode = ErrorCode.INVALID_REQUEST;
          return answer;
        }
        if (context.apiVersion === 0) {
          answer.oldStyleOffsets = found && p.maxNumOffsets > 0 ? [found.offset] : [];
        } else if (found && found.offset >= 0) {
          answer.offset = found.offset;
          answer.timestamp = found.timestamp;
        } else {
          // Nothing found (or nothing tiered): Kafka's unknown answer, no epoch either.
          answer.leaderEpoch = -1;
        }
      } catch (e) {
        if (!(e instanceof LogError)) throw e;
        answer.errorCode = ErrorCode[e.kafkaError];
      }
      return answer;
    }),
  }));
  return { throttleTimeMs: 0, topics };
};

/**
 * OffsetForLeaderEpoch (key 23): the end offset of a leader epoch, which a consumer
 * (KIP-320) or follower compares with its own to detect log truncation.
 *
 * The single node's partitions have one leader epoch, LEADER_EPOCH, starting at the
 * log start offset: Kafka records an epoch's start when the partition gets its leader,
 * so even an empty log has the entry (the same epoch cache Fetch's last_fetched_epoch
 * check uses, handlers/fetch.ts). Answers follow Kafka's
 * LeaderEpochFileCache.endOffsetFor over that one entry:
 * - LEADER_EPOCH, the latest epoch: {LEADER_EPOCH, log end offset}.
 * - a later epoch or -1 (undefined): {-1, -1}, no error, which tells the client that
 *   no end offset is known.
 * - an epoch below every known one (negative, other than -1): the asked epoch with the
 *   first offset of LEADER_EPOCH, the log start offset.
 * current_leader_epoch (v2+), when given (-1 means not): above LEADER_EPOCH is
 * UNKNOWN_LEADER_EPOCH, below it FENCED_LEADER_EPOCH, as Kafka's Partition checks it.
 * An unknown topic or partition is UNKNOWN_TOPIC_OR_PARTITION.
 *
 * replica_id (v3+: -1 from a consumer, a broker id from a follower): Kafka answers both
 * from the leader's log alike, and so does this node, whose log is the leader's.
 */
import type { Message } from '../../protocol/codec.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import { LogError } from '../log/errors.ts';
import { LEADER_EPOCH, type PartitionLog } from '../log/partition-log.ts';
import type { BrokerServices } from './broker-services.ts';
import type { RequestHandler } from './handler.ts';

/** Kafka's UNDEFINED_EPOCH and UNDEFINED_EPOCH_OFFSET, also "no current epoch given". */
const UNDEFINED = -1;

export const handleOffsetForLeaderEpoch: RequestHandler<BrokerServices> = (body, _c, services) => {
  const topics = (body.topics as Message[]).map((t) => ({
    topic: t.topic,
    partitions: (t.partitions as Message[]).map((p) => {
      const partition = p.partition as number;
      let log: PartitionLog;
      try {
        log = services.logs.getLog(t.topic as string, partition);
      } catch (e) {
        if (!(e instanceof LogError)) throw e;
        return answer(partition, ErrorCode[e.kafkaError]);
      }
      const current = (p.currentLeaderEpoch as number | undefined) ?? UNDEFINED;
      if (current !== UNDEFINED && current > LEADER_EPOCH)
        return answer(partition, ErrorCode.UNKNOWN_LEADER_EPOCH);
      if (current !== UNDEFINED && current < LEADER_EPOCH)
        return answer(partition, ErrorCode.FENCED_LEADER_EPOCH);
      return {
        ...answer(partition, ErrorCode.NONE),
        ...endOffsetFor(p.leaderEpoch as number, log),
      };
    }),
  }));
  return { throttleTimeMs: 0, topics };
};

function answer(partition: number, errorCode: number): Message {
  return { errorCode, partition, leaderEpoch: UNDEFINED, endOffset: BigInt(UNDEFINED) };
}

/** LeaderEpochFileCache.endOffsetFor over the log's one epoch entry (see the header). */
function endOffsetFor(
  epoch: number,
  log: PartitionLog,
): { leaderEpoch: number; endOffset: bigint } {
  const none = { leaderEpoch: UNDEFINED, endOffset: BigInt(UNDEFINED) };
  if (epoch === UNDEFINED || epoch > LEADER_EPOCH) return none;
  if (epoch === LEADER_EPOCH) return { leaderEpoch: epoch, endOffset: BigInt(log.logEndOffset) };
  return { leaderEpoch: epoch, endOffset: BigInt(log.logStartOffset) };
}

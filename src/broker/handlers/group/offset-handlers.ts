/**
 * OffsetCommit, OffsetFetch and OffsetDelete: committed offsets through the
 * GroupCoordinator, which makes them durable in __consumer_offsets before answering.
 * Offsets for partitions that do not exist are refused per partition with
 * UNKNOWN_TOPIC_OR_PARTITION, as Kafka does.
 *
 * Offsets a transaction committed (TxnOffsetCommit) are invisible until its COMMIT
 * marker: OffsetFetch answers the previously committed offset meanwhile, or, when the
 * request sets require_stable (v7+), UNSTABLE_OFFSET_COMMIT for that partition, which
 * clients retry until the transaction is decided.
 *
 * OffsetFetch v9 names the member and its epoch per group (KIP-848): for a consumer
 * group the member must exist (else UNKNOWN_MEMBER_ID) at exactly that epoch (else
 * STALE_MEMBER_EPOCH), answered for the whole group as Kafka does; a null member id
 * with epoch -1 (admin clients, and every request before v9) reads freely. Classic
 * groups do not check them, as in Kafka.
 */
import type { Message } from '../../../protocol/codec.ts';
import { ErrorCode } from '../../../protocol/error-codes.ts';
import type { OffsetCommitEntry } from '../../group/group-coordinator.ts';
import type { RequestHandler } from '../handler.ts';
import { code, type GroupHandlerServices, partitionExists } from './services.ts';

type Handler = RequestHandler<GroupHandlerServices>;

export const handleOffsetCommit: Handler = async (body, ctx, { coordinator, logs }) => {
  const entries: OffsetCommitEntry[] = [];
  const answers: Array<{
    name: string;
    partitions: Array<{ partitionIndex: number; errorCode: number }>;
  }> = [];
  const pending: Array<{
    partition: { partitionIndex: number; errorCode: number };
    index: number;
  }> = [];
  for (const topic of body.topics as Message[]) {
    const partitions: Array<{ partitionIndex: number; errorCode: number }> = [];
    for (const p of topic.partitions as Message[]) {
      const answer = { partitionIndex: p.partitionIndex, errorCode: 0 };
      partitions.push(answer);
      if (!partitionExists(logs, topic.name, p.partitionIndex)) {
        answer.errorCode = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
        continue;
      }
      pending.push({ partition: answer, index: entries.length });
      entries.push({
        topic: topic.name,
        partition: p.partitionIndex,
        offset: Number(p.committedOffset),
        leaderEpoch: p.committedLeaderEpoch,
        metadata: p.committedMetadata,
      });
    }
    answers.push({ name: topic.name, partitions });
  }
  const errors = await coordinator.commitOffsets({
    groupId: body.groupId,
    generationId: body.generationId,
    memberId: body.memberId,
    groupInstanceId: body.groupInstanceId,
    offsets: entries,
    // v9+: a consumer group member's epoch in generationId (KIP-848).
    apiVersion: ctx.apiVersion,
  });
  for (const { partition, index } of pending) partition.errorCode = code(errors[index]!);
  return { throttleTimeMs: 0, topics: answers };
};

type TopicRequest = { name: string; partitionIndexes: number[] } | null;

function fetchGroup(
  services: GroupHandlerServices,
  groupId: string,
  topics: TopicRequest[] | null,
  requireStable: boolean,
) {
  const wanted =
    topics === null
      ? null
      : topics.flatMap((t) =>
          t!.partitionIndexes.map((partition) => ({ topic: t!.name, partition })),
        );
  const offsets = services.coordinator.fetchOffsets(groupId, wanted);
  const byTopic = new Map<string, Message[]>();
  for (const o of offsets) {
    let list = byTopic.get(o.topic);
    if (!list) {
      list = [];
      byTopic.set(o.topic, list);
    }
    const unstable =
      requireStable && services.coordinator.hasPendingTxnOffset(groupId, o.topic, o.partition);
    list.push(
      unstable
        ? {
            partitionIndex: o.partition,
            committedOffset: -1n,
            committedLeaderEpoch: -1,
            metadata: '',
            errorCode: ErrorCode.UNSTABLE_OFFSET_COMMIT,
          }
        : {
            partitionIndex: o.partition,
            committedOffset: BigInt(o.offset),
            committedLeaderEpoch: o.leaderEpoch,
            metadata: o.metadata,
            errorCode: 0,
          },
    );
  }
  return [...byTopic].map(([name, partitions]) => ({ name, partitions }));
}

export const handleOffsetFetch: Handler = (body, ctx, services) => {
  if (ctx.apiVersion >= 8) {
    return {
      throttleTimeMs: 0,
      groups: body.groups.map((g: Message) => {
        // v9: a consumer group's member fetches as itself (before v9: null and -1).
        const refused = services.coordinator.consumerGroups.offsetFetchError(
          g.groupId,
          g.memberId,
          g.memberEpoch,
        );
        if (refused !== undefined && refused !== 'NONE') {
          return { groupId: g.groupId, topics: [], errorCode: code(refused) };
        }
        return {
          groupId: g.groupId,
          topics: fetchGroup(services, g.groupId, g.topics, body.requireStable),
          errorCode: 0,
        };
      }),
    };
  }
  return {
    throttleTimeMs: 0,
    topics: fetchGroup(services, body.groupId, body.topics, body.requireStable),
    errorCode: 0,
  };
};

export const handleOffsetDelete: Handler = async (body, _ctx, { coordinator, logs }) => {
  const partitions = (body.topics as Message[]).flatMap((t) =>
    (t.partitions as Message[]).map((p) => ({
      topic: t.name as string,
      partition: p.partitionIndex as number,
    })),
  );
  // A KIP-848 group's offsets live in a classic entry with no members: its members'
  // subscriptions are checked here, as Kafka keeps offsets a consumer group reads.
  const subscribed = coordinator.consumerGroups.subscribedTopics(body.groupId, logs.topics());
  const result = await coordinator.deleteOffsets(
    body.groupId,
    partitions.filter((p) => !subscribed.has(p.topic)),
  );
  if (result.error === 'NONE' && subscribed.size > 0) {
    const others = [...result.partitions];
    result.partitions = partitions.map((p) =>
      subscribed.has(p.topic) ? 'GROUP_SUBSCRIBED_TO_TOPIC' : others.shift()!,
    );
  }
  let i = 0;
  return {
    errorCode: code(result.error),
    throttleTimeMs: 0,
    topics:
      result.error === 'NONE'
        ? (body.topics as Message[]).map((t) => ({
            name: t.name,
            partitions: (t.partitions as Message[]).map((p) => ({
              partitionIndex: p.partitionIndex,
              errorCode: code(result.partitions[i++]!),
            })),
          }))
        : [],
  };
};

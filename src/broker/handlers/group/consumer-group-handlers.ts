/**
 * ConsumerGroupHeartbeat and ConsumerGroupDescribe (KIP-848): request shapes in and
 * out of the ConsumerGroupCoordinator (group/consumer-group/), which the classic
 * GroupCoordinator holds so both protocols share one group id namespace. The heartbeat
 * sees the topics as they are at that moment (names, ids, partition counts), and is
 * answered once the records it changed are in __consumer_offsets (Kafka answers after
 * its write is committed); when they cannot be written, COORDINATOR_NOT_AVAILABLE,
 * which clients retry.
 */
import type { Message } from '../../../protocol/codec.ts';
import { ErrorCode } from '../../../protocol/error-codes.ts';
import { AUTHORIZED_OPERATIONS_OMITTED } from '../../../protocol/sentinels.ts';
import type { Assignment } from '../../group/consumer-group/assignment.ts';
import { toTopicPartitions } from '../../group/consumer-group/assignment.ts';
import type { RequestHandler } from '../handler.ts';
import { type GroupHandlerServices, topicImages } from './services.ts';

type Handler = RequestHandler<GroupHandlerServices>;

/** With no ACLs, what Kafka's AclEntry lists for a group: READ, DELETE, DESCRIBE. */
const GROUP_OPERATIONS = (1 << 3) | (1 << 6) | (1 << 8);

export const handleConsumerGroupHeartbeat: Handler = async (body, ctx, { coordinator, logs }) => {
  let result = coordinator.consumerGroups.heartbeat(
    {
      groupId: body.groupId,
      memberId: body.memberId,
      memberEpoch: body.memberEpoch,
      instanceId: body.instanceId,
      rackId: body.rackId,
      rebalanceTimeoutMs: body.rebalanceTimeoutMs,
      subscribedTopicNames: body.subscribedTopicNames,
      subscribedTopicRegex: body.subscribedTopicRegex ?? null,
      serverAssignor: body.serverAssignor,
      topicPartitions: body.topicPartitions,
      clientId: ctx.clientId ?? '',
      clientHost: `/${ctx.connection.remoteAddress.replace(/:\d+$/, '')}`,
    },
    topicImages(logs),
  );
  try {
    // The answer's epoch and assignment must survive a restart before the member acts on them.
    await coordinator.consumerGroups.stored(body.groupId);
  } catch {
    result = {
      ...result,
      error: 'COORDINATOR_NOT_AVAILABLE',
      errorMessage: `The records of group ${body.groupId} could not be written to __consumer_offsets.`,
      memberId: null,
      memberEpoch: 0,
      heartbeatIntervalMs: 0,
      assignment: null,
    };
  }
  return {
    throttleTimeMs: 0,
    errorCode: ErrorCode[result.error],
    errorMessage: result.errorMessage,
    memberId: result.memberId,
    memberEpoch: result.memberEpoch,
    heartbeatIntervalMs: result.heartbeatIntervalMs,
    assignment: result.assignment === null ? null : { topicPartitions: result.assignment },
  };
};

export const handleConsumerGroupDescribe: Handler = (body, _ctx, { coordinator, logs }) => {
  const names = new Map(logs.topics().map((t) => [t.topicId, t.name]));
  const described = (a: Assignment) => ({
    topicPartitions: toTopicPartitions(a).map((t) => ({
      topicId: t.topicId,
      topicName: names.get(t.topicId) ?? '',
      partitions: t.partitions,
    })),
  });
  return {
    throttleTimeMs: 0,
    groups: (body.groupIds as string[]).map((groupId): Message => {
      const g = coordinator.consumerGroups.describe(groupId);
      return {
        errorCode: ErrorCode[g.error],
        errorMessage: g.errorMessage,
        groupId,
        groupState: g.state,
        groupEpoch: g.groupEpoch,
        assignmentEpoch: g.assignmentEpoch,
        assignorName: g.assignorName,
        // The coordinator names a member's fields as the response does; only the
        // assignments change shape (topic ids and names on the wire).
        members: g.members.map((m) => ({
          ...m,
          assignment: described(m.assignment),
          targetAssignment: described(m.targetAssignment),
        })),
        authorizedOperations:
          body.includeAuthorizedOperations && g.error === 'NONE'
            ? GROUP_OPERATIONS
            : AUTHORIZED_OPERATIONS_OMITTED,
      };
    }),
  };
};

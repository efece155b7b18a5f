/**
 * ConsumerGroupHeartbeat and ConsumerGroupDescribe (KIP-848): request shapes in and
 * out of the ConsumerGroupCoordinator (group/consumer-group/), which the classic
 * GroupCoordinator holds so both protocols share one group id namespace. The heartbeat
 * sees the topics as they are at that moment (names, ids, partition counts).
 */
import type { Message } from '../../../protocol/codec.ts';
import { ErrorCode } from '../../../protocol/error-codes.ts';
import { AUTHORIZED_OPERATIONS_OMITTED } from '../../../protocol/sentinels.ts';
import type { Assignment, TopicImage } from '../../group/consumer-group/assignment.ts';
import { toTopicPartitions } from '../../group/consumer-group/assignment.ts';
import type { LogManager } from '../../log/log-manager.ts';
import type { RequestHandler } from '../handler.ts';
import type { GroupHandlerServices } from './services.ts';

type Handler = RequestHandler<GroupHandlerServices>;

/** With no ACLs, what Kafka's AclEntry lists for a group: READ, DELETE, DESCRIBE. */
const GROUP_OPERATIONS = (1 << 3) | (1 << 6) | (1 << 8);

function topicImages(logs: LogManager): TopicImage[] {
  return logs.topics().map((t) => ({ name: t.name, topicId: t.topicId, partitions: t.partitions }));
}

export const handleConsumerGroupHeartbeat: Handler = (body, ctx, { coordinator, logs }) => {
  const result = coordinator.consumerGroups.heartbeat(
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

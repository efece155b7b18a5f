/**
 * FindCoordinator, DescribeGroups, ListGroups and DeleteGroups. The embedded broker is
 * a single node and coordinates every group (key type 0) and every transactional id
 * (key type 1) itself; another key type is INVALID_REQUEST, as Kafka answers.
 *
 * KIP-848 consumer groups are listed and described here too, as Kafka 4.0 does: type
 * `consumer`, their own states (Empty, Assigning, Reconciling, Stable), the assignor as
 * protocol data, and each member's subscription and assignment in the classic consumer
 * protocol's encoding, so admin tools that only speak these APIs see them.
 */
import type { Message } from '../../../protocol/codec.ts';
import {
  CONSUMER_PROTOCOL_TYPE,
  encodeAssignment,
  encodeSubscription,
} from '../../../protocol/consumer-protocol.ts';
import { ErrorCode } from '../../../protocol/error-codes.ts';
import { toTopicPartitions } from '../../group/consumer-group/assignment.ts';
import type { RequestHandler } from '../handler.ts';
import { code, type GroupHandlerServices } from './services.ts';

type Handler = RequestHandler<GroupHandlerServices>;

const GROUP_KEY_TYPE = 0;
/** Kafka's GroupType names (ListGroups v5). */
const CLASSIC_GROUP_TYPE = 'classic';
const CONSUMER_GROUP_TYPE = 'consumer';
const TRANSACTION_KEY_TYPE = 1;

export const handleFindCoordinator: Handler = (body, ctx, { nodeId, advertisedHost, port }) => {
  const supported = body.keyType === GROUP_KEY_TYPE || body.keyType === TRANSACTION_KEY_TYPE;
  const errorCode = supported ? 0 : ErrorCode.INVALID_REQUEST;
  const errorMessage = supported ? null : `unknown coordinator key type ${body.keyType}`;
  const answer = (key: string) => ({
    key,
    nodeId: supported ? nodeId : -1,
    host: supported ? advertisedHost : '',
    port: supported ? port : -1,
    errorCode,
    errorMessage,
  });
  if (ctx.apiVersion >= 4) {
    return { throttleTimeMs: 0, coordinators: (body.coordinatorKeys as string[]).map(answer) };
  }
  const { nodeId: n, host, port: p } = answer(body.key);
  return { throttleTimeMs: 0, errorCode, errorMessage, nodeId: n, host, port: p };
};

function describeConsumerGroup({ coordinator, logs }: GroupHandlerServices, groupId: string) {
  const g = coordinator.consumerGroups.describe(groupId);
  const names = new Map(logs.topics().map((t) => [t.topicId, t.name]));
  return {
    errorCode: 0,
    groupId,
    groupState: g.state,
    protocolType: CONSUMER_PROTOCOL_TYPE,
    protocolData: g.assignorName,
    members: g.members.map((m) => ({
      memberId: m.memberId,
      groupInstanceId: m.instanceId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      memberMetadata: encodeSubscription(m.subscribedTopicNames),
      memberAssignment: encodeAssignment(
        toTopicPartitions(m.assignment).map((t) => ({
          topic: names.get(t.topicId) ?? '',
          partitions: t.partitions,
        })),
      ),
    })),
  };
}

export const handleDescribeGroups: Handler = (body, _ctx, services) => ({
  throttleTimeMs: 0,
  groups: (body.groups as string[]).map((groupId) => {
    const { coordinator } = services;
    if (coordinator.consumerGroups.has(groupId)) return describeConsumerGroup(services, groupId);
    const g = coordinator.describeGroup(groupId);
    return {
      errorCode: code(g.error),
      groupId,
      groupState: g.state,
      protocolType: g.protocolType,
      protocolData: g.protocolName,
      members: g.members.map((m) => ({
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        memberMetadata: m.metadata,
        memberAssignment: m.assignment,
      })),
    };
  }),
});

/**
 * ListGroups: v4 filters by state, v5 by type (`classic` for the groups of JoinGroup,
 * `consumer` for KIP-848's), both case-insensitive as in Kafka; an empty filter keeps all.
 */
export const handleListGroups: Handler = (body, _ctx, { coordinator }) => {
  const lower = (names: string[]) => new Set(names.map((s) => s.toLowerCase()));
  const states = lower(body.statesFilter as string[]);
  const types = lower(body.typesFilter as string[]);
  const consumerGroups = coordinator.consumerGroups.list();
  const ids = new Set(consumerGroups.map((g) => g.groupId));
  return {
    throttleTimeMs: 0,
    errorCode: 0,
    groups: [
      ...coordinator
        .listGroups()
        .filter((g) => !ids.has(g.groupId))
        .map((g) => ({ ...g, groupType: CLASSIC_GROUP_TYPE })),
      ...consumerGroups.map((g) => ({
        ...g,
        protocolType: CONSUMER_PROTOCOL_TYPE,
        groupType: CONSUMER_GROUP_TYPE,
      })),
    ]
      .filter((g) => states.size === 0 || states.has(g.state.toLowerCase()))
      .filter((g) => types.size === 0 || types.has(g.groupType))
      .map((g) => ({
        groupId: g.groupId,
        protocolType: g.protocolType,
        groupState: g.state,
        groupType: g.groupType,
      })),
  };
};

export const handleDeleteGroups: Handler = async (body, _ctx, { coordinator }) => {
  const results: Message[] = [];
  for (const groupId of body.groupsNames as string[]) {
    if (coordinator.consumerGroups.has(groupId)) {
      // An empty consumer group goes with its offsets; one with members stays.
      const consumer = coordinator.consumerGroups.deleteIfEmpty(groupId);
      if (consumer === 'NONE') {
        // Its tombstones must be written, or the group would come back after a restart.
        const written = await coordinator.consumerGroups.stored(groupId).then(
          () => true,
          () => false,
        );
        if (!written) {
          results.push({ groupId, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE });
          continue;
        }
      }
      const offsets = consumer === 'NONE' ? await coordinator.deleteGroup(groupId) : consumer;
      results.push({
        groupId,
        errorCode: ErrorCode[offsets === 'GROUP_ID_NOT_FOUND' ? 'NONE' : offsets],
      });
      continue;
    }
    results.push({ groupId, errorCode: code(await coordinator.deleteGroup(groupId)) });
  }
  return { throttleTimeMs: 0, results };
};

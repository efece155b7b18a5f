/**
 * FindCoordinator, DescribeGroups, ListGroups and DeleteGroups. The embedded broker is
 * a single node and coordinates every group (key type 0) and every transactional id
 * (key type 1) itself; another key type is INVALID_REQUEST, as Kafka answers.
 */
import type { Message } from '../../../protocol/codec.ts';
import { ErrorCode } from '../../../protocol/error-codes.ts';
import type { RequestHandler } from '../handler.ts';
import { code, type GroupHandlerServices } from './services.ts';

type Handler = RequestHandler<GroupHandlerServices>;

const GROUP_KEY_TYPE = 0;
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

export const handleDescribeGroups: Handler = (body, _ctx, { coordinator }) => ({
  throttleTimeMs: 0,
  groups: (body.groups as string[]).map((groupId) => {
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

export const handleListGroups: Handler = (body, _ctx, { coordinator }) => {
  const filter = new Set((body.statesFilter as string[]).map((s) => s.toLowerCase()));
  return {
    throttleTimeMs: 0,
    errorCode: 0,
    groups: coordinator
      .listGroups()
      .filter((g) => filter.size === 0 || filter.has(g.state.toLowerCase()))
      .map((g) => ({ groupId: g.groupId, protocolType: g.protocolType, groupState: g.state })),
  };
};

export const handleDeleteGroups: Handler = async (body, _ctx, { coordinator }) => {
  const results: Message[] = [];
  for (const groupId of body.groupsNames as string[]) {
    results.push({ groupId, errorCode: code(await coordinator.deleteGroup(groupId)) });
  }
  return { throttleTimeMs: 0, results };
};

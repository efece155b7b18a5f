/**
 * JoinGroup, SyncGroup, Heartbeat and LeaveGroup: request shapes in and out of the
 * GroupCoordinator, across every version the codec knows (fields a version does not
 * carry hold their defaults, so one shape serves all).
 */
import type { Message } from '../../../protocol/codec.ts';
import type { RequestContext, RequestHandler } from '../handler.ts';
import { code, type GroupHandlerServices, topicImages } from './services.ts';

type Handler = RequestHandler<GroupHandlerServices>;

export const handleJoinGroup: Handler = async (
  body,
  ctx: RequestContext,
  { coordinator, logs },
) => {
  // The topics serve a classic member of a consumer group (assigned server-side).
  const result = await coordinator.join(
    {
      groupId: body.groupId,
      memberId: body.memberId,
      groupInstanceId: body.groupInstanceId,
      clientId: ctx.clientId ?? '',
      clientHost: `/${ctx.connection.remoteAddress.replace(/:\d+$/, '')}`,
      protocolType: body.protocolType,
      protocols: body.protocols.map((p: Message) => ({
        name: p.name,
        metadata: Buffer.from(p.metadata),
      })),
      sessionTimeoutMs: body.sessionTimeoutMs,
      rebalanceTimeoutMs: ctx.apiVersion >= 1 ? body.rebalanceTimeoutMs : body.sessionTimeoutMs,
      // Kafka asks for a member id round trip from v4 on; earlier clients cannot handle it.
      requireKnownMemberId: ctx.apiVersion >= 4,
      reason: body.reason ?? null,
    },
    topicImages(logs),
  );
  return {
    throttleTimeMs: 0,
    errorCode: code(result.error),
    generationId: result.generationId,
    protocolType: result.protocolType,
    // Before v7 the protocol name is not nullable.
    protocolName: result.protocolName ?? (ctx.apiVersion >= 7 ? null : ''),
    leader: result.leaderId,
    // Before v9 a client cannot be told to skip: it gets no members, so it does not
    // assign (Kafka's JoinGroupResponse does the same).
    skipAssignment: ctx.apiVersion >= 9 && result.skipAssignment === true,
    memberId: result.memberId,
    members: result.skipAssignment === true && ctx.apiVersion < 9 ? [] : result.members,
  };
};

export const handleSyncGroup: Handler = async (body, _ctx, { coordinator, logs }) => {
  const result = await coordinator.sync(
    {
      groupId: body.groupId,
      memberId: body.memberId,
      generationId: body.generationId,
      groupInstanceId: body.groupInstanceId,
      protocolType: body.protocolType,
      protocolName: body.protocolName,
      assignments: body.assignments.map((a: Message) => ({
        memberId: a.memberId,
        assignment: Buffer.from(a.assignment),
      })),
    },
    topicImages(logs),
  );
  return {
    throttleTimeMs: 0,
    errorCode: code(result.error),
    protocolType: result.protocolType,
    protocolName: result.protocolName,
    assignment: result.assignment,
  };
};

export const handleHeartbeat: Handler = (body, _ctx, { coordinator }) => ({
  throttleTimeMs: 0,
  errorCode: code(
    coordinator.heartbeat(body.groupId, body.memberId, body.generationId, body.groupInstanceId),
  ),
});

export const handleLeaveGroup: Handler = (body, ctx, { coordinator }) => {
  // v0-2 name one member; v3+ a batch (possibly by group.instance.id alone).
  const leaving =
    ctx.apiVersion >= 3
      ? body.members.map((m: Message) => ({
          memberId: m.memberId,
          groupInstanceId: m.groupInstanceId,
          reason: m.reason ?? null,
        }))
      : [{ memberId: body.memberId, groupInstanceId: null }];
  const result = coordinator.leave(body.groupId, leaving);
  const errorCode =
    ctx.apiVersion >= 3 ? code(result.error) : code(result.members[0]?.error ?? result.error);
  return {
    throttleTimeMs: 0,
    errorCode,
    members: result.members.map((m) => ({
      memberId: m.memberId,
      groupInstanceId: m.groupInstanceId,
      errorCode: code(m.error),
    })),
  };
};

/**
 * Members of a consumer group (KIP-848) that speak the classic protocol: JoinGroup,
 * SyncGroup, Heartbeat and LeaveGroup served by the consumer group, as Kafka 4.0's
 * GroupMetadataManager does (classicGroupJoinToConsumerGroup, ...SyncToConsumerGroup,
 * ...HeartbeatToConsumerGroup, ...LeaveToConsumerGroup). They come from a classic group
 * upgraded by a ConsumerGroupHeartbeat (migration.ts), or join a consumer group that has
 * members (any policy but `disabled`).
 *
 * - JoinGroup: the member's subscription (and, v1+, the partitions it owns) is read from
 *   its first protocol's ConsumerProtocolSubscription; a changed subscription or a new
 *   member bumps the group epoch, the target is computed server-side and the member
 *   reconciles as a heartbeat would. The answer carries generation = member epoch, no
 *   leader and no members: nobody assigns, the leader's SyncGroup assignment is ignored.
 * - SyncGroup: the member's assigned partitions in ConsumerProtocolAssignment format (the
 *   version of its subscription); REBALANCE_IN_PROGRESS when the group epoch moved past
 *   it and it has nothing left to revoke, so it rejoins.
 * - Heartbeat: REBALANCE_IN_PROGRESS when it must rejoin: the group epoch is ahead of
 *   its epoch, it must revoke partitions, or partitions it waits for are free.
 * - A member told to rejoin must send JoinGroup, and one that joined SyncGroup, within its
 *   rebalance timeout, and heartbeat within its JoinGroup's session timeout; else it is
 *   removed from the group.
 * - Generations are member epochs: a request with another one is ILLEGAL_GENERATION.
 *
 * Answers go out once the group's records are in __consumer_offsets (`stored`).
 * Single-threaded: the ConsumerGroupCoordinator owns it, on the broker thread.
 */
import { randomUUID } from 'node:crypto';
import { CONSUMER_PROTOCOL_TYPE } from '../../../protocol/consumer-protocol.ts';
import type { Logger } from '../../../util/logger.ts';
import type { Timers } from '../../../util/timers.ts';
import {
  type GroupError,
  type JoinResult,
  joinError,
  type ProtocolMetadata,
  type SyncResult,
  syncError,
} from '../group.ts';
import type { JoinRequest, MemberIdentity, SyncRequest } from '../group-coordinator.ts';
import { type Assignment, partitionsOf, type TopicImage } from './assignment.ts';
import { type ConsumerGroup, type ConsumerMember, joiningMember } from './consumer-group.ts';
import {
  assignmentByIds,
  type DecodedSubscription,
  decodeSubscription,
  encodeAssignmentFor,
} from './migration.ts';

/** What the consumer group coordinator lends to serve classic members. */
export interface ClassicMembersHost {
  timers: Timers;
  logger: Logger;
  group(groupId: string): ConsumerGroup | undefined;
  advance(
    group: ConsumerGroup,
    member: ConsumerMember,
    change: { bumpEpoch: boolean; owned: Assignment | null },
    topics: readonly TopicImage[],
  ): void;
  /** Removes the members (and persists); may downgrade the group. */
  fence(group: ConsumerGroup, members: ConsumerMember[], reason: string): void;
  persist(groupId: string): void;
  stored(groupId: string): Promise<void>;
  scheduleSession(group: ConsumerGroup, member: ConsumerMember): void;
}

export class ClassicMembers {
  constructor(private readonly host: ClassicMembersHost) {}

  // ---- JoinGroup ----------------------------------------------------------------------

  async join(req: JoinRequest, topics: readonly TopicImage[]): Promise<JoinResult> {
    const group = this.host.group(req.groupId);
    if (!group) return joinError('COORDINATOR_NOT_AVAILABLE', req.memberId);
    if (!supportsProtocols(group, req.protocolType, req.protocols)) {
      return joinError('INCONSISTENT_GROUP_PROTOCOL', req.memberId);
    }
    const unknown = req.memberId === '';
    const memberId = unknown ? randomUUID() : req.memberId;
    if (unknown && req.requireKnownMemberId && req.groupInstanceId === null) {
      return joinError('MEMBER_ID_REQUIRED', memberId);
    }
    let subscription: DecodedSubscription;
    try {
      subscription = decodeSubscription(req.protocols[0]!.metadata);
    } catch {
      return joinError('INCONSISTENT_GROUP_PROTOCOL', req.memberId);
    }
    const found = this.memberFor(group, req, memberId, unknown);
    if (typeof found === 'string') return joinError(found, req.memberId);
    const { member, joined } = found;
    const names = [...new Set(subscription.topics)].sort();
    const changed =
      names.join('\0') !== member.subscribedTopicNames.join('\0') ||
      member.subscribedTopicRegex !== null ||
      member.serverAssignor !== null;
    member.subscribedTopicNames = names;
    member.subscribedTopicRegex = null;
    member.serverAssignor = null;
    if (subscription.rackId !== null) member.rackId = subscription.rackId;
    member.rebalanceTimeoutMs =
      req.rebalanceTimeoutMs > 0 ? req.rebalanceTimeoutMs : req.sessionTimeoutMs;
    member.clientId = req.clientId;
    member.clientHost = req.clientHost;
    member.classic = {
      sessionTimeoutMs: req.sessionTimeoutMs,
      protocols: req.protocols.map((p) => ({ name: p.name, metadata: p.metadata })),
    };
    const owned = assignmentByIds(subscription.ownedPartitions, topics);
    this.host.advance(group, member, { bumpEpoch: changed || joined, owned }, topics);
    member.cancelJoin?.();
    member.cancelJoin = undefined;
    this.scheduleSyncTimeout(group, member);
    this.host.persist(group.groupId);
    try {
      await this.host.stored(group.groupId);
    } catch {
      return joinError('COORDINATOR_NOT_AVAILABLE', req.memberId);
    }
    return {
      error: 'NONE',
      generationId: member.memberEpoch,
      protocolType: CONSUMER_PROTOCOL_TYPE,
      protocolName: req.protocols[0]!.name,
      // No leader: the coordinator assigns, so no member does.
      leaderId: '',
      memberId: member.memberId,
      members: [],
    };
  }

  /** Kafka's getOrMaybeSubscribe{Dynamic,Static}ConsumerGroupMember for a JoinGroup. */
  private memberFor(
    group: ConsumerGroup,
    req: JoinRequest,
    memberId: string,
    unknown: boolean,
  ): { member: ConsumerMember; joined: boolean } | GroupError {
    if (req.groupInstanceId !== null) {
      const heldBy = group.staticMembers.get(req.groupInstanceId);
      const holder = heldBy === undefined ? undefined : group.members.get(heldBy);
      if (holder && unknown) {
        // The instance restarted: the new member id takes over its place and partitions.
        const member = blankMember(memberId, req);
        member.subscribedTopicNames = holder.subscribedTopicNames;
        group.replaceStaticMember(holder, member);
        return { member, joined: false };
      }
      if (holder) {
        if (holder.memberId !== memberId) return 'FENCED_INSTANCE_ID';
        return holder.classic ? { member: holder, joined: false } : 'UNKNOWN_MEMBER_ID';
      }
    }
    const existing = group.members.get(memberId);
    if (existing)
      return existing.classic ? { member: existing, joined: false } : 'UNKNOWN_MEMBER_ID';
    // A member id not in the group (the one MEMBER_ID_REQUIRED gave out, or one the group
    // forgot) joins as a new member, as Kafka's getOrMaybeCreateMember does for JoinGroup.
    const member = blankMember(memberId, req);
    group.addMember(member);
    return { member, joined: true };
  }

  // ---- SyncGroup ----------------------------------------------------------------------

  async sync(req: SyncRequest, topics: readonly TopicImage[]): Promise<SyncResult> {
    const group = this.host.group(req.groupId);
    if (!group) return syncError('COORDINATOR_NOT_AVAILABLE');
    const found = classicMember(group, req.memberId, req.groupInstanceId);
    if (typeof found === 'string') return syncError(found);
    const member = found;
    if (req.generationId !== member.memberEpoch) return syncError('ILLEGAL_GENERATION');
    const preferred = member.classic!.protocols[0]!;
    if (
      (req.protocolType !== null && req.protocolType !== CONSUMER_PROTOCOL_TYPE) ||
      (req.protocolName !== null && req.protocolName !== preferred.name)
    ) {
      return syncError('INCONSISTENT_GROUP_PROTOCOL');
    }
    // A new epoch: rejoin first, unless it is still revoking (then it rejoins after).
    if (group.groupEpoch > member.memberEpoch && member.state !== 'UNREVOKED_PARTITIONS') {
      this.scheduleJoinTimeout(group, member);
      return syncError('REBALANCE_IN_PROGRESS');
    }
    member.cancelSync?.();
    member.cancelSync = undefined;
    this.host.scheduleSession(group, member);
    try {
      await this.host.stored(group.groupId);
    } catch {
      return syncError('COORDINATOR_NOT_AVAILABLE');
    }
    return {
      error: 'NONE',
      protocolType: CONSUMER_PROTOCOL_TYPE,
      protocolName: preferred.name,
      // The leader's assignment is ignored: the member gets what the coordinator computed.
      assignment: encodeAssignmentFor(member.assigned, topics, preferred.metadata),
    };
  }

  // ---- Heartbeat and LeaveGroup -------------------------------------------------------

  heartbeat(
    groupId: string,
    memberId: string,
    generationId: number,
    groupInstanceId: string | null,
  ): GroupError {
    const group = this.host.group(groupId);
    if (!group) return 'COORDINATOR_NOT_AVAILABLE';
    const member = classicMember(group, memberId, groupInstanceId);
    if (typeof member === 'string') return member;
    if (generationId !== member.memberEpoch) return 'ILLEGAL_GENERATION';
    this.host.scheduleSession(group, member);
    const mustRejoin =
      member.memberEpoch < group.groupEpoch ||
      member.state === 'UNREVOKED_PARTITIONS' ||
      (member.state === 'UNRELEASED_PARTITIONS' && !waitsOnUnreleased(group, member));
    if (!mustRejoin) return 'NONE';
    this.scheduleJoinTimeout(group, member);
    return 'REBALANCE_IN_PROGRESS';
  }

  leave(
    groupId: string,
    leaving: MemberIdentity[],
  ): { error: GroupError; members: Array<MemberIdentity & { error: GroupError }> } {
    const group = this.host.group(groupId);
    if (!group) {
      return {
        error: 'COORDINATOR_NOT_AVAILABLE',
        members: leaving.map((m) => ({ ...m, error: 'COORDINATOR_NOT_AVAILABLE' })),
      };
    }
    const removed: ConsumerMember[] = [];
    const results = leaving.map((identity) => {
      let member: ConsumerMember | undefined;
      if (identity.groupInstanceId === null) {
        member = group.members.get(identity.memberId);
        if (!member?.classic) return { ...identity, error: 'UNKNOWN_MEMBER_ID' as GroupError };
      } else {
        const heldBy = group.staticMembers.get(identity.groupInstanceId);
        member = heldBy === undefined ? undefined : group.members.get(heldBy);
        if (!member) return { ...identity, error: 'UNKNOWN_MEMBER_ID' as GroupError };
        // An entry naming only the instance (an admin's removal) takes any member.
        if (identity.memberId !== '') {
          if (member.memberId !== identity.memberId)
            return { ...identity, error: 'FENCED_INSTANCE_ID' as GroupError };
          if (!member.classic) return { ...identity, error: 'UNKNOWN_MEMBER_ID' as GroupError };
        }
      }
      if (!removed.includes(member)) removed.push(member);
      return { ...identity, error: 'NONE' as GroupError };
    });
    if (removed.length > 0) {
      const reason = leaving.find((m) => m.reason)?.reason;
      this.host.fence(group, removed, reason ? `left the group: ${reason}` : 'left the group');
    }
    return { error: 'NONE', members: results };
  }

  // ---- Timeouts -----------------------------------------------------------------------

  /** Told to rejoin, the member must send JoinGroup within its rebalance timeout. */
  private scheduleJoinTimeout(group: ConsumerGroup, member: ConsumerMember): void {
    if (member.cancelJoin) return;
    member.cancelJoin = this.host.timers.schedule(member.rebalanceTimeoutMs, () => {
      member.cancelJoin = undefined;
      if (group.members.get(member.memberId) !== member) return;
      this.host.fence(group, [member], 'did not rejoin within the rebalance timeout');
    });
  }

  /** Joined, the member must send SyncGroup within its rebalance timeout. */
  private scheduleSyncTimeout(group: ConsumerGroup, member: ConsumerMember): void {
    member.cancelSync?.();
    member.cancelSync = this.host.timers.schedule(member.rebalanceTimeoutMs, () => {
      member.cancelSync = undefined;
      if (group.members.get(member.memberId) !== member) return;
      this.host.fence(group, [member], 'did not send SyncGroup within the rebalance timeout');
    });
  }
}

/** Kafka's ConsumerGroup.supportsClassicProtocols: `consumer`, sharing a protocol with the classic members. */
function supportsProtocols(
  group: ConsumerGroup,
  protocolType: string,
  protocols: readonly ProtocolMetadata[],
): boolean {
  if (protocolType !== CONSUMER_PROTOCOL_TYPE || protocols.length === 0) return false;
  for (const m of group.members.values()) {
    if (!m.classic) continue;
    if (!m.classic.protocols.some((p) => protocols.some((q) => q.name === p.name))) return false;
  }
  return true;
}

/** Kafka's validateConsumerGroupMember plus throwIfMemberDoesNotUseClassicProtocol. */
function classicMember(
  group: ConsumerGroup,
  memberId: string,
  instanceId: string | null,
): ConsumerMember | GroupError {
  let member: ConsumerMember | undefined;
  if (instanceId === null) {
    member = group.members.get(memberId);
  } else {
    const heldBy = group.staticMembers.get(instanceId);
    member = heldBy === undefined ? undefined : group.members.get(heldBy);
    if (member && member.memberId !== memberId) return 'FENCED_INSTANCE_ID';
  }
  if (!member?.classic) return 'UNKNOWN_MEMBER_ID';
  return member;
}

/** Whether some partition of the member's target it does not have is still another's. */
function waitsOnUnreleased(group: ConsumerGroup, member: ConsumerMember): boolean {
  for (const [topicId, p] of partitionsOf(group.targetOf(member.memberId))) {
    if (member.assigned.get(topicId)?.has(p)) continue;
    const owner = group.ownerOf(topicId, p);
    if (owner !== undefined && owner !== member.memberId) return true;
  }
  return false;
}

function blankMember(memberId: string, req: JoinRequest): ConsumerMember {
  return joiningMember({
    memberId,
    instanceId: req.groupInstanceId,
    rackId: null,
    clientId: req.clientId,
    clientHost: req.clientHost,
    rebalanceTimeoutMs: req.rebalanceTimeoutMs,
  });
}

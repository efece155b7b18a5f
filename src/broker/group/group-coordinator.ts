/**
 * The classic group coordinator: JoinGroup, SyncGroup, Heartbeat, LeaveGroup, and the
 * membership checks of OffsetCommit, for any protocol type (`consumer`, `connect`). The
 * committed offsets themselves are kept by group-offsets.ts (as Kafka splits
 * GroupCoordinator from GroupMetadataManager's offset cache).
 *
 * It follows Kafka's GroupCoordinator: a first JoinGroup without a member id (v4+)
 * gets MEMBER_ID_REQUIRED and a fresh id; a rebalance completes when every known
 * member has rejoined or the largest rebalance timeout passes, and members that did
 * not rejoin are dropped; the leader receives the member list and sends the
 * assignment in SyncGroup; Heartbeat answers REBALANCE_IN_PROGRESS to make members
 * rejoin; stale generations get ILLEGAL_GENERATION. Static members
 * (group.instance.id) that restart get their old place back without a rebalance, and
 * the member they replaced is fenced: every JoinGroup, SyncGroup, Heartbeat,
 * LeaveGroup and OffsetCommit naming the instance with another member id is answered
 * FENCED_INSTANCE_ID, checked before the member id (Group.isStaticMemberFenced).
 *
 * A group id that names a consumer group with members (consumer-group/) is served by
 * it: its classic members' JoinGroup, SyncGroup, Heartbeat and LeaveGroup go to
 * consumer-group/classic-members.ts. The online upgrade and downgrade between the two
 * (group.consumer.migration.policy) hand a group's members from one coordinator to the
 * other (releaseForUpgrade, adoptDowngraded); the offsets stay here throughout.
 *
 * Persistence is delegated to a GroupStore (the __consumer_offsets topic): offsets are
 * acknowledged only after the store has them, and the group's membership snapshot is
 * stored after each generation so a restarted broker knows its groups.
 *
 * Single-threaded: called from the broker thread's request handlers and timers only.
 * Time comes from the injected clock and timers.
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../util/clock.ts';
import type { Logger } from '../../util/logger.ts';
import type { Timers } from '../../util/timers.ts';
import type { TopicImage } from './consumer-group/assignment.ts';
import {
  ConsumerGroupCoordinator,
  type ConsumerGroupStore,
} from './consumer-group/consumer-group-coordinator.ts';
import type { MigrationPolicy } from './consumer-group/migration.ts';
import {
  type CommittedOffset,
  Group,
  type GroupError,
  type GroupState,
  type JoinResult,
  joinError,
  type Member,
  type ProtocolMetadata,
  type SyncResult,
  syncError,
} from './group.ts';
import { GroupOffsets } from './group-offsets.ts';
import { PendingTxnOffsets } from './pending-txn-offsets.ts';

export interface JoinRequest {
  groupId: string;
  /** '' for a member joining for the first time. */
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  protocolType: string;
  protocols: ProtocolMetadata[];
  sessionTimeoutMs: number;
  /** v0 has none: Kafka uses the session timeout. */
  rebalanceTimeoutMs: number;
  /** JoinGroup v4+: hand out a member id first (MEMBER_ID_REQUIRED). */
  requireKnownMemberId: boolean;
  /** JoinGroup v8+ (KIP-800): why the client joins, for the rebalance's log line. */
  reason?: string | null;
}

export interface SyncRequest {
  groupId: string;
  memberId: string;
  generationId: number;
  groupInstanceId: string | null;
  protocolType: string | null;
  protocolName: string | null;
  assignments: Array<{ memberId: string; assignment: Buffer }>;
}

export interface MemberIdentity {
  memberId: string;
  groupInstanceId: string | null;
  /** LeaveGroup v5+ (KIP-800): why the member leaves, for the log line. */
  reason?: string | null;
}

/** A client's reason (KIP-800) appended to the coordinator's own, as Kafka logs both. */
function withClientReason(reason: string, client: string | null | undefined): string {
  return client ? `${reason}; client reason: ${client}` : reason;
}

export interface OffsetCommitEntry {
  topic: string;
  partition: number;
  offset: number;
  leaderEpoch: number;
  metadata: string | null;
}

/** An offset as the store holds it: when it was committed and where in the store's log. */
export type StoredOffset = OffsetCommitEntry & { commitTimestamp: number; logOffset: number };

export interface GroupSnapshot {
  groupId: string;
  protocolType: string | null;
  protocolName: string | null;
  generationId: number;
  leaderId: string | null;
  members: Array<{
    memberId: string;
    groupInstanceId: string | null;
    clientId: string;
    clientHost: string;
    sessionTimeoutMs: number;
    rebalanceTimeoutMs: number;
    metadata: Buffer;
    assignment: Buffer;
  }>;
}

/** Where committed offsets and group metadata (classic and consumer groups) are made durable. */
export interface GroupStore extends ConsumerGroupStore {
  /** Resolves with the offset of the batch written (the commit's position in the store's log). */
  storeOffsets(
    groupId: string,
    offsets: Array<OffsetCommitEntry & { commitTimestamp: number }>,
  ): Promise<number>;
  removeOffsets(
    groupId: string,
    partitions: Array<{ topic: string; partition: number }>,
  ): Promise<void>;
  storeGroup(snapshot: GroupSnapshot): Promise<void>;
  removeGroup(groupId: string): Promise<void>;
  /** TxnOffsetCommit: offsets written as part of the producer's transaction; resolves like storeOffsets. */
  storeTxnOffsets(
    groupId: string,
    producerId: number,
    producerEpoch: number,
    offsets: Array<OffsetCommitEntry & { commitTimestamp: number }>,
  ): Promise<number>;
}

export interface GroupCoordinatorOptions {
  clock: Clock;
  timers: Timers;
  logger: Logger;
  store?: GroupStore;
  minSessionTimeoutMs: number;
  maxSessionTimeoutMs: number;
  /** group.initial.rebalance.delay.ms: how long the first rebalance of an empty group waits for more members. */
  initialRebalanceDelayMs: number;
  /** offsets.retention.minutes, in ms. */
  offsetsRetentionMs: number;
  /** offset.metadata.max.bytes */
  maxMetadataBytes: number;
  /** group.consumer.migration.policy (consumer-group/migration.ts); `disabled` when absent. */
  consumerMigrationPolicy?: MigrationPolicy;
}

export interface DescribedGroup {
  groupId: string;
  error: GroupError;
  state: GroupState;
  protocolType: string;
  protocolName: string;
  members: Array<{
    memberId: string;
    groupInstanceId: string | null;
    clientId: string;
    clientHost: string;
    metadata: Buffer;
    assignment: Buffer;
  }>;
}

const EMPTY = Buffer.alloc(0);

export class GroupCoordinator {
  private readonly groups = new Map<string, Group>();
  private readonly store: GroupStore | undefined;
  private readonly logger: Logger;
  private closed = false;

  private readonly offsets: GroupOffsets;
  private readonly pendingTxnOffsets = new PendingTxnOffsets();
  /** KIP-848 consumer groups: same namespace, their offsets kept here (consumer-group/). */
  readonly consumerGroups: ConsumerGroupCoordinator;

  constructor(private readonly options: GroupCoordinatorOptions) {
    this.store = options.store;
    this.logger = options.logger;
    this.offsets = new GroupOffsets(this.groups, options);
    this.consumerGroups = new ConsumerGroupCoordinator({
      ...options,
      classicGroups: this.groups,
      migrationPolicy: options.consumerMigrationPolicy ?? 'disabled',
      classicMigrations: {
        releaseForUpgrade: (group) => this.releaseForUpgrade(group),
        adoptDowngraded: (groupId, generation, protocolName, members) =>
          this.adoptDowngraded(groupId, generation, protocolName, members),
      },
    });
  }

  // ---- Migration between the protocols (consumer-group/migration.ts) ------------------

  /** The classic group becomes a consumer group: it keeps only its offsets here. */
  private releaseForUpgrade(group: Group): void {
    group.cancelJoinTimer?.();
    group.cancelJoinTimer = undefined;
    group.cancelSyncTimer?.();
    group.cancelSyncTimer = undefined;
    group.initialDelayActive = false;
    group.pendingSync.clear();
    for (const cancel of group.pendingMembers.values()) cancel();
    group.pendingMembers.clear();
    for (const m of group.members.values()) {
      m.cancelSession?.();
      m.cancelSession = undefined;
      // They rejoin, and the consumer group serves them (Kafka's convertToConsumerGroup).
      m.awaitingJoin?.(joinError('REBALANCE_IN_PROGRESS', m.memberId));
      m.awaitingSync?.(syncError('REBALANCE_IN_PROGRESS'));
      m.awaitingJoin = undefined;
      m.awaitingSync = undefined;
    }
    group.members.clear();
    group.staticMembers.clear();
    group.state = 'Empty';
    group.protocolName = null;
    group.leaderId = null;
    group.emptySince = this.options.clock.now();
    this.store?.removeGroup(group.groupId).catch((err) => {
      this.logger.error({ err, group: group.groupId }, 'could not tombstone upgraded group');
    });
  }

  /** A downgraded consumer group's classic members: a Stable group that rebalances at once. */
  private adoptDowngraded(
    groupId: string,
    generation: number,
    protocolName: string,
    members: Member[],
  ): void {
    let group = this.groups.get(groupId);
    if (!group) {
      group = new Group(groupId, this.options.clock.now());
      this.groups.set(groupId, group);
    }
    group.generationId = generation;
    group.protocolType = 'consumer';
    group.protocolName = protocolName;
    for (const m of members) {
      group.members.set(m.memberId, m);
      if (m.groupInstanceId !== null) group.staticMembers.set(m.groupInstanceId, m.memberId);
      this.scheduleSession(group, m);
    }
    group.leaderId = members[0]?.memberId ?? null;
    group.state = 'Stable';
    this.persistGroup(group);
    this.prepareRebalance(group, `downgrade of group ${groupId} from consumer to classic`);
  }

  // ---- JoinGroup ------------------------------------------------------------------

  /**
   * `topics` (names, ids, partition counts) serve a JoinGroup for a consumer group with
   * members, which computes its assignment server-side (consumer-group/classic-members.ts).
   */
  join(req: JoinRequest, topics: readonly TopicImage[] = []): Promise<JoinResult> {
    const fail = (error: GroupError, memberId = req.memberId) =>
      Promise.resolve(joinError(error, memberId));
    if (this.closed) return fail('COORDINATOR_NOT_AVAILABLE');
    if (req.groupId === '') return fail('INVALID_GROUP_ID');
    if (
      req.sessionTimeoutMs < this.options.minSessionTimeoutMs ||
      req.sessionTimeoutMs > this.options.maxSessionTimeoutMs
    ) {
      return fail('INVALID_SESSION_TIMEOUT');
    }
    if (this.consumerGroups.hasMembers(req.groupId)) {
      // With the policy disabled a consumer group takes no new classic members (refused by
      // name); one it has (stored under another policy) is still served.
      if (
        this.consumerGroups.policy === 'disabled' &&
        !this.consumerGroups.isClassicMember(req.groupId, req.memberId)
      )
        return fail('INCONSISTENT_GROUP_PROTOCOL');
      return this.consumerGroups.classicMembers.join(req, topics);
    }
    this.consumerGroups.yieldToClassic(req.groupId);
    let group = this.groups.get(req.groupId);
    if (!group) {
      if (req.memberId !== '') return fail('UNKNOWN_MEMBER_ID');
      group = new Group(req.groupId, this.options.clock.now());
      this.groups.set(req.groupId, group);
    }
    if (group.state === 'Dead') return fail('COORDINATOR_NOT_AVAILABLE');
    if (!group.supportsProtocols(req.protocolType, req.protocols)) {
      return fail('INCONSISTENT_GROUP_PROTOCOL');
    }
    return req.memberId === '' ? this.joinNewMember(group, req) : this.joinKnownMember(group, req);
  }

  private joinNewMember(group: Group, req: JoinRequest): Promise<JoinResult> {
    const memberId = `${req.clientId}-${randomUUID()}`;
    if (req.groupInstanceId !== null) return this.joinStaticMember(group, req, memberId);
    if (req.requireKnownMemberId) {
      // The member must come back with this id; forget it if it never does.
      const cancel = this.options.timers.schedule(req.sessionTimeoutMs, () => {
        group.pendingMembers.delete(memberId);
        if (group.state === 'PreparingRebalance') this.tryCompleteJoin(group);
      });
      group.pendingMembers.set(memberId, cancel);
      return Promise.resolve(joinError('MEMBER_ID_REQUIRED', memberId));
    }
    return this.addMemberAndRebalance(group, req, memberId);
  }

  private joinStaticMember(
    group: Group,
    req: JoinRequest,
    newMemberId: string,
  ): Promise<JoinResult> {
    const oldMemberId = group.staticMembers.get(req.groupInstanceId!);
    const old = oldMemberId === undefined ? undefined : group.members.get(oldMemberId);
    if (!old) return this.addMemberAndRebalance(group, req, newMemberId);
    // The instance restarted: the new member id takes over, the old one is fenced.
    group.members.delete(old.memberId);
    old.cancelSession?.();
    old.awaitingJoin?.(joinError('FENCED_INSTANCE_ID', old.memberId));
    old.awaitingSync?.(syncError('FENCED_INSTANCE_ID'));
    const member: Member = { ...this.newMember(req, newMemberId), assignment: old.assignment };
    group.members.set(newMemberId, member);
    group.staticMembers.set(req.groupInstanceId!, newMemberId);
    if (group.leaderId === old.memberId) group.leaderId = newMemberId;
    const sameProtocols = protocolsEqual(old.protocols, req.protocols);
    if (group.state === 'Stable' && sameProtocols) {
      // Same place, same assignment, no rebalance: the member re-syncs to get it. A
      // leader gets the members to keep for later rebalances, and skips assigning.
      this.scheduleSession(group, member);
      this.persistGroup(group);
      const leader = group.leaderId === newMemberId;
      return Promise.resolve({
        ...this.joinResultFor(group, member, leader),
        skipAssignment: leader,
      });
    }
    return this.updateMemberAndRebalance(group, member, req);
  }

  private joinKnownMember(group: Group, req: JoinRequest): Promise<JoinResult> {
    if (group.isStaticMemberFenced(req.memberId, req.groupInstanceId)) {
      return Promise.resolve(joinError('FENCED_INSTANCE_ID', req.memberId));
    }
    const cancelPending = group.pendingMembers.get(req.memberId);
    if (cancelPending) {
      cancelPending();
      group.pendingMembers.delete(req.memberId);
      return this.addMemberAndRebalance(group, req, req.memberId);
    }
    const member = group.members.get(req.memberId);
    // An instance id nobody holds: the member resets its id and joins afresh.
    const unknownInstance =
      req.groupInstanceId !== null && !group.staticMembers.has(req.groupInstanceId);
    if (!member || unknownInstance) {
      return Promise.resolve(joinError('UNKNOWN_MEMBER_ID', req.memberId));
    }
    switch (group.state) {
      case 'PreparingRebalance':
        return this.updateMemberAndRebalance(group, member, req);
      case 'CompletingRebalance':
        if (protocolsEqual(member.protocols, req.protocols)) {
          // A retried JoinGroup of this generation: answer it again.
          this.scheduleSession(group, member);
          return Promise.resolve(
            this.joinResultFor(group, member, group.leaderId === member.memberId),
          );
        }
        return this.updateMemberAndRebalance(group, member, req);
      case 'Stable':
        if (group.leaderId !== member.memberId && protocolsEqual(member.protocols, req.protocols)) {
          this.scheduleSession(group, member);
          return Promise.resolve(this.joinResultFor(group, member, false));
        }
        return this.updateMemberAndRebalance(group, member, req);
      default:
        return Promise.resolve(joinError('UNKNOWN_MEMBER_ID', req.memberId));
    }
  }

  private newMember(req: JoinRequest, memberId: string): Member {
    return {
      memberId,
      groupInstanceId: req.groupInstanceId,
      clientId: req.clientId,
      clientHost: req.clientHost,
      protocolType: req.protocolType,
      protocols: req.protocols,
      sessionTimeoutMs: req.sessionTimeoutMs,
      rebalanceTimeoutMs:
        req.rebalanceTimeoutMs > 0 ? req.rebalanceTimeoutMs : req.sessionTimeoutMs,
      assignment: EMPTY,
    };
  }

  private addMemberAndRebalance(
    group: Group,
    req: JoinRequest,
    memberId: string,
  ): Promise<JoinResult> {
    const member = this.newMember(req, memberId);
    if (group.members.size === 0) group.protocolType = req.protocolType;
    group.members.set(memberId, member);
    if (req.groupInstanceId !== null) group.staticMembers.set(req.groupInstanceId, memberId);
    if (group.leaderId === null) group.leaderId = memberId;
    const joined = new Promise<JoinResult>((resolve) => {
      member.awaitingJoin = resolve;
    });
    this.scheduleSession(group, member);
    this.prepareRebalance(group, withClientReason(`member ${memberId} joined`, req.reason));
    return joined;
  }

  private updateMemberAndRebalance(
    group: Group,
    member: Member,
    req: JoinRequest,
  ): Promise<JoinResult> {
    member.protocols = req.protocols;
    member.sessionTimeoutMs = req.sessionTimeoutMs;
    member.rebalanceTimeoutMs =
      req.rebalanceTimeoutMs > 0 ? req.rebalanceTimeoutMs : req.sessionTimeoutMs;
    member.clientId = req.clientId;
    member.clientHost = req.clientHost;
    // A second JoinGroup while one is pending replaces it; the old one learns it lost.
    member.awaitingJoin?.(joinError('REBALANCE_IN_PROGRESS', member.memberId));
    const joined = new Promise<JoinResult>((resolve) => {
      member.awaitingJoin = resolve;
    });
    this.scheduleSession(group, member);
    if (group.state === 'PreparingRebalance') {
      this.tryCompleteJoin(group);
    } else {
      this.prepareRebalance(
        group,
        withClientReason(`member ${member.memberId} rejoined`, req.reason),
      );
    }
    return joined;
  }

  private prepareRebalance(group: Group, reason: string): void {
    group.cancelSyncTimer?.();
    group.cancelSyncTimer = undefined;
    group.pendingSync.clear();
    if (group.state === 'CompletingRebalance') {
      for (const m of group.members.values()) {
        if (!m.awaitingSync) continue;
        m.awaitingSync(syncError('REBALANCE_IN_PROGRESS'));
        m.awaitingSync = undefined;
        // An answered member gets a full session to come back, as after any answer.
        this.scheduleSession(group, m);
      }
    }
    if (group.state === 'PreparingRebalance') {
      if (group.initialDelayActive) this.extendInitialDelay(group);
      this.tryCompleteJoin(group);
      return;
    }
    const fromEmpty = group.state === 'Empty';
    group.state = 'PreparingRebalance';
    this.logger.debug({ group: group.groupId, reason }, 'preparing rebalance');
    group.cancelJoinTimer?.();
    if (fromEmpty && this.options.initialRebalanceDelayMs > 0) {
      group.initialDelayActive = true;
      group.cancelJoinTimer = this.options.timers.schedule(
        this.options.initialRebalanceDelayMs,
        () => this.endInitialDelay(group),
      );
      return;
    }
    group.cancelJoinTimer = this.options.timers.schedule(group.maxRebalanceTimeoutMs(), () =>
      this.completeJoin(group),
    );
    this.tryCompleteJoin(group);
  }

  /** Each member arriving during the initial delay extends it, up to the rebalance timeout. */
  private extendInitialDelay(group: Group): void {
    group.cancelJoinTimer?.();
    group.cancelJoinTimer = this.options.timers.schedule(this.options.initialRebalanceDelayMs, () =>
      this.endInitialDelay(group),
    );
  }

  private endInitialDelay(group: Group): void {
    group.initialDelayActive = false;
    group.cancelJoinTimer = this.options.timers.schedule(group.maxRebalanceTimeoutMs(), () =>
      this.completeJoin(group),
    );
    this.tryCompleteJoin(group);
  }

  private tryCompleteJoin(group: Group): void {
    if (group.state !== 'PreparingRebalance' || group.initialDelayActive) return;
    if (group.allMembersJoined()) this.completeJoin(group);
  }

  private completeJoin(group: Group): void {
    if (group.state !== 'PreparingRebalance') return;
    group.cancelJoinTimer?.();
    group.cancelJoinTimer = undefined;
    group.initialDelayActive = false;
    for (const m of [...group.members.values()]) {
      if (!m.awaitingJoin) this.removeMember(group, m, 'did not rejoin in time');
    }
    group.generationId++;
    if (group.members.size === 0) {
      // The protocol type stays, as in Kafka's GroupMetadata: an emptied consumer group
      // is still a consumer group to ListGroups and admin clients, not a simple one.
      group.state = 'Empty';
      group.protocolName = null;
      group.leaderId = null;
      group.emptySince = this.options.clock.now();
      this.persistGroup(group);
      return;
    }
    group.protocolName = group.selectProtocol();
    group.state = 'CompletingRebalance';
    if (group.leaderId === null || !group.members.has(group.leaderId)) {
      group.leaderId = group.members.keys().next().value!;
    }
    this.logger.debug(
      { group: group.groupId, generation: group.generationId, members: group.members.size },
      'rebalance joined',
    );
    this.schedulePendingSync(group);
    for (const m of group.members.values()) {
      m.assignment = EMPTY;
      const answer = m.awaitingJoin!;
      m.awaitingJoin = undefined;
      this.scheduleSession(group, m);
      answer(this.joinResultFor(group, m, m.memberId === group.leaderId));
    }
  }

  /** Every member must send SyncGroup within the rebalance timeout, or it is removed. */
  private schedulePendingSync(group: Group): void {
    group.cancelSyncTimer?.();
    group.pendingSync.clear();
    for (const id of group.members.keys()) group.pendingSync.add(id);
    const generation = group.generationId;
    group.cancelSyncTimer = this.options.timers.schedule(group.maxRebalanceTimeoutMs(), () => {
      group.cancelSyncTimer = undefined;
      if (group.generationId !== generation) return;
      if (group.state !== 'CompletingRebalance' && group.state !== 'Stable') return;
      const silent = [...group.pendingSync]
        .map((id) => group.members.get(id))
        .filter((m): m is Member => m !== undefined);
      group.pendingSync.clear();
      for (const m of silent) {
        if (group.members.get(m.memberId) === m) {
          this.removeMemberAndUpdateGroup(
            group,
            m,
            'did not send SyncGroup within the rebalance timeout',
          );
        }
      }
    });
  }

  private joinResultFor(group: Group, member: Member, withMembers: boolean): JoinResult {
    return {
      error: 'NONE',
      generationId: group.generationId,
      protocolType: group.protocolType,
      protocolName: group.protocolName,
      leaderId: group.leaderId ?? '',
      memberId: member.memberId,
      members: withMembers
        ? [...group.members.values()].map((m) => ({
            memberId: m.memberId,
            groupInstanceId: m.groupInstanceId,
            metadata: group.metadataFor(m, group.protocolName),
          }))
        : [],
    };
  }

  // ---- SyncGroup ------------------------------------------------------------------

  sync(req: SyncRequest, topics: readonly TopicImage[] = []): Promise<SyncResult> {
    const group = this.groups.get(req.groupId);
    if (this.closed) return Promise.resolve(syncError('COORDINATOR_NOT_AVAILABLE'));
    if (this.consumerGroups.hasMembers(req.groupId))
      return this.consumerGroups.classicMembers.sync(req, topics);
    if (!group) return Promise.resolve(syncError('UNKNOWN_MEMBER_ID'));
    if (group.isStaticMemberFenced(req.memberId, req.groupInstanceId)) {
      return Promise.resolve(syncError('FENCED_INSTANCE_ID'));
    }
    const member = group.members.get(req.memberId);
    if (!member) return Promise.resolve(syncError('UNKNOWN_MEMBER_ID'));
    if (req.generationId !== group.generationId)
      return Promise.resolve(syncError('ILLEGAL_GENERATION'));
    if (
      (req.protocolType !== null && req.protocolType !== group.protocolType) ||
      (req.protocolName !== null && req.protocolName !== group.protocolName)
    ) {
      return Promise.resolve(syncError('INCONSISTENT_GROUP_PROTOCOL'));
    }
    switch (group.state) {
      case 'PreparingRebalance':
        return Promise.resolve(syncError('REBALANCE_IN_PROGRESS'));
      case 'Stable':
        group.pendingSync.delete(member.memberId);
        this.scheduleSession(group, member);
        return Promise.resolve(this.syncResultFor(group, member));
      case 'CompletingRebalance': {
        group.pendingSync.delete(member.memberId);
        const answered = new Promise<SyncResult>((resolve) => {
          member.awaitingSync = resolve;
        });
        this.scheduleSession(group, member);
        if (member.memberId === group.leaderId) this.applyAssignment(group, req.assignments);
        return answered;
      }
      default:
        return Promise.resolve(syncError('UNKNOWN_MEMBER_ID'));
    }
  }

  private applyAssignment(group: Group, assignments: SyncRequest['assignments']): void {
    const byMember = new Map(assignments.map((a) => [a.memberId, a.assignment]));
    for (const m of group.members.values()) m.assignment = byMember.get(m.memberId) ?? EMPTY;
    group.state = 'Stable';
    this.persistGroup(group);
    for (const m of group.members.values()) {
      const answer = m.awaitingSync;
      m.awaitingSync = undefined;
      answer?.(this.syncResultFor(group, m));
    }
  }

  private syncResultFor(group: Group, member: Member): SyncResult {
    return {
      error: 'NONE',
      protocolType: group.protocolType,
      protocolName: group.protocolName,
      assignment: member.assignment,
    };
  }

  // ---- Heartbeat and LeaveGroup -----------------------------------------------------

  heartbeat(
    groupId: string,
    memberId: string,
    generationId: number,
    groupInstanceId: string | null,
  ): GroupError {
    if (this.closed) return 'COORDINATOR_NOT_AVAILABLE';
    if (this.consumerGroups.hasMembers(groupId))
      return this.consumerGroups.classicMembers.heartbeat(
        groupId,
        memberId,
        generationId,
        groupInstanceId,
      );
    const group = this.groups.get(groupId);
    if (!group) return 'UNKNOWN_MEMBER_ID';
    if (group.isStaticMemberFenced(memberId, groupInstanceId)) return 'FENCED_INSTANCE_ID';
    const member = group.members.get(memberId);
    if (!member) return 'UNKNOWN_MEMBER_ID';
    if (generationId !== group.generationId) return 'ILLEGAL_GENERATION';
    this.scheduleSession(group, member);
    return group.state === 'PreparingRebalance' ? 'REBALANCE_IN_PROGRESS' : 'NONE';
  }

  leave(
    groupId: string,
    leaving: MemberIdentity[],
  ): { error: GroupError; members: Array<MemberIdentity & { error: GroupError }> } {
    if (this.consumerGroups.hasMembers(groupId))
      return this.consumerGroups.classicMembers.leave(groupId, leaving);
    const group = this.groups.get(groupId);
    if (!group) {
      return {
        error: 'UNKNOWN_MEMBER_ID',
        members: leaving.map((m) => ({ ...m, error: 'UNKNOWN_MEMBER_ID' })),
      };
    }
    const results = leaving.map((identity) => {
      // An entry naming only the instance (member id '', v3+) removes whoever holds it.
      if (
        identity.memberId !== '' &&
        group.isStaticMemberFenced(identity.memberId, identity.groupInstanceId)
      ) {
        return { ...identity, error: 'FENCED_INSTANCE_ID' as GroupError };
      }
      const memberId =
        identity.memberId === '' && identity.groupInstanceId !== null
          ? (group.staticMembers.get(identity.groupInstanceId) ?? '')
          : identity.memberId;
      const member = group.members.get(memberId);
      if (!member) {
        const pending = group.pendingMembers.get(memberId);
        if (pending) {
          pending();
          group.pendingMembers.delete(memberId);
          this.tryCompleteJoin(group);
          return { ...identity, error: 'NONE' as GroupError };
        }
        return { ...identity, error: 'UNKNOWN_MEMBER_ID' as GroupError };
      }
      this.removeMemberAndUpdateGroup(
        group,
        member,
        withClientReason('left the group', identity.reason),
      );
      return { ...identity, error: 'NONE' as GroupError };
    });
    return { error: 'NONE', members: results };
  }

  private scheduleSession(group: Group, member: Member): void {
    member.cancelSession?.();
    member.cancelSession = this.options.timers.schedule(member.sessionTimeoutMs, () => {
      member.cancelSession = undefined;
      if (group.members.get(member.memberId) !== member) return;
      if (member.awaitingJoin || member.awaitingSync) {
        // Waiting on the coordinator itself keeps a member alive.
        this.scheduleSession(group, member);
        return;
      }
      this.logger.info({ group: group.groupId, member: member.memberId }, 'member session expired');
      this.removeMemberAndUpdateGroup(group, member, 'session timeout');
    });
  }

  private removeMember(group: Group, member: Member, reason: string): void {
    member.cancelSession?.();
    member.cancelSession = undefined;
    group.members.delete(member.memberId);
    if (
      member.groupInstanceId !== null &&
      group.staticMembers.get(member.groupInstanceId) === member.memberId
    ) {
      group.staticMembers.delete(member.groupInstanceId);
    }
    member.awaitingJoin?.(joinError('UNKNOWN_MEMBER_ID', member.memberId));
    member.awaitingJoin = undefined;
    member.awaitingSync?.(syncError('UNKNOWN_MEMBER_ID'));
    member.awaitingSync = undefined;
    if (group.leaderId === member.memberId) {
      group.leaderId = group.members.keys().next().value ?? null;
    }
    this.logger.debug({ group: group.groupId, member: member.memberId, reason }, 'member removed');
  }

  private removeMemberAndUpdateGroup(group: Group, member: Member, reason: string): void {
    this.removeMember(group, member, reason);
    switch (group.state) {
      case 'Stable':
      case 'CompletingRebalance':
        this.prepareRebalance(group, `member ${member.memberId} ${reason}`);
        break;
      case 'PreparingRebalance':
        this.tryCompleteJoin(group);
        break;
      default:
        break;
    }
  }

  // ---- Offsets (group-offsets.ts keeps them; membership is checked here) -----------

  /**
   * OffsetCommit. Generation -1 with no active members is a "simple" commit (admin
   * tools, consumers without group management) and creates the group if needed.
   */
  async commitOffsets(req: {
    groupId: string;
    generationId: number;
    memberId: string;
    groupInstanceId: string | null;
    offsets: OffsetCommitEntry[];
    apiVersion?: number;
  }): Promise<GroupError[]> {
    const all = (e: GroupError) => req.offsets.map(() => e);
    if (this.closed) return all('COORDINATOR_NOT_AVAILABLE');
    if (req.groupId === '') return all('INVALID_GROUP_ID');
    const consumerGroupCheck = this.consumerGroups.offsetCommitError(req);
    if (consumerGroupCheck !== undefined && consumerGroupCheck !== 'NONE')
      return all(consumerGroupCheck);
    let group = this.groups.get(req.groupId);
    // Fencing comes first, even for a commit without a generation.
    if (group?.isStaticMemberFenced(req.memberId, req.groupInstanceId)) {
      return all('FENCED_INSTANCE_ID');
    }
    if (req.generationId < 0 || consumerGroupCheck === 'NONE') {
      if (group && group.state !== 'Empty' && group.state !== 'Dead')
        return all('UNKNOWN_MEMBER_ID');
      if (!group) {
        group = new Group(req.groupId, this.options.clock.now());
        this.groups.set(req.groupId, group);
      }
    } else {
      if (!group) return all('ILLEGAL_GENERATION');
      const member = group.members.get(req.memberId);
      if (!member) return all('UNKNOWN_MEMBER_ID');
      if (req.generationId !== group.generationId) return all('ILLEGAL_GENERATION');
      if (group.state === 'CompletingRebalance') return all('REBALANCE_IN_PROGRESS');
      this.scheduleSession(group, member);
    }
    return this.offsets.commit(group, req.offsets);
  }

  /**
   * TxnOffsetCommit: offsets that become committed when the producer's transaction
   * commits (completeTxnOffsets). Membership is checked only when the request names a
   * generation or member (v3+), as Kafka does; the transaction coordinator has checked
   * the producer already.
   */
  async commitTxnOffsets(req: {
    groupId: string;
    producerId: number;
    producerEpoch: number;
    generationId: number;
    memberId: string;
    groupInstanceId: string | null;
    offsets: OffsetCommitEntry[];
  }): Promise<GroupError[]> {
    const all = (e: GroupError) => req.offsets.map(() => e);
    if (this.closed) return all('COORDINATOR_NOT_AVAILABLE');
    if (req.groupId === '') return all('INVALID_GROUP_ID');
    const group = this.groups.get(req.groupId);
    const consumerGroupCheck = this.consumerGroups.offsetCommitError({
      ...req,
      transactional: true,
    });
    if (consumerGroupCheck !== undefined && consumerGroupCheck !== 'NONE')
      return all(consumerGroupCheck);
    if (group?.isStaticMemberFenced(req.memberId, req.groupInstanceId))
      return all('FENCED_INSTANCE_ID');
    if (consumerGroupCheck === undefined && (req.generationId >= 0 || req.memberId !== '')) {
      if (!group) return all('ILLEGAL_GENERATION');
      if (!group.members.has(req.memberId)) return all('UNKNOWN_MEMBER_ID');
      if (req.generationId !== group.generationId) return all('ILLEGAL_GENERATION');
    }
    const { errors, accepted } = this.offsets.validate(req.offsets);
    if (accepted.length > 0) {
      const logOffset = this.store
        ? await this.store.storeTxnOffsets(req.groupId, req.producerId, req.producerEpoch, accepted)
        : this.offsets.unstoredPosition();
      for (const o of accepted)
        this.pendingTxnOffsets.add(req.producerId, { ...o, groupId: req.groupId, logOffset });
    }
    return errors;
  }

  /**
   * The producer's transaction ended (its marker is in __consumer_offsets): commit or
   * drop its offsets. A committed one replaces the group's offset only if it was
   * written after it (GroupMetadata.completePendingTxnOffsetCommit): an OffsetCommit
   * that landed between the TxnOffsetCommit and the marker stays. Replaying the log at
   * start-up goes through here too, so both give the same answer.
   */
  completeTxnOffsets(producerId: number, commit: boolean): void {
    const settled = this.pendingTxnOffsets.take(producerId);
    if (!commit) return;
    for (const o of settled) {
      const current = this.groups
        .get(o.groupId)
        ?.offsets.get(Group.offsetKey(o.topic, o.partition));
      if (current === undefined || current.logOffset < o.logOffset)
        this.offsets.restore(o.groupId, o);
    }
  }

  /** Whether a transaction has an offset for this partition of the group that it has not settled. */
  hasPendingTxnOffset(groupId: string, topic: string, partition: number): boolean {
    return this.pendingTxnOffsets.has(groupId, topic, partition);
  }

  /** A transactional offset read back from the store; its marker, if any, follows. */
  restorePendingTxnOffset(producerId: number, groupId: string, o: StoredOffset): void {
    this.pendingTxnOffsets.add(producerId, { ...o, groupId });
  }

  /** Committed offsets of a group: all of them when `partitions` is null. */
  fetchOffsets(
    groupId: string,
    partitions: Array<{ topic: string; partition: number }> | null,
  ): Array<{ topic: string; partition: number } & CommittedOffset> {
    return this.offsets.fetch(groupId, partitions);
  }

  /**
   * OffsetDelete: only for partitions the group is not consuming. A deleted partition's
   * pending transactional offsets go with it (its tombstone does the same on replay).
   */
  async deleteOffsets(
    groupId: string,
    partitions: Array<{ topic: string; partition: number }>,
  ): Promise<{ error: GroupError; partitions: GroupError[] }> {
    const answer = await this.offsets.delete(groupId, partitions);
    if (answer.error === 'NONE') {
      partitions.forEach((p, i) => {
        if (answer.partitions[i] === 'NONE')
          this.pendingTxnOffsets.drop(groupId, p.topic, p.partition);
      });
    }
    return answer;
  }

  /**
   * Drops offsets of groups that have been empty longer than offsets.retention.minutes,
   * then the consumer groups left with neither members nor offsets (Kafka's
   * cleanupGroupMetadata), whose records would otherwise be kept forever.
   */
  async expireOffsets(): Promise<number> {
    this.consumerGroups.holdOffsetsOfActiveGroups();
    const expired = await this.offsets.expire();
    await this.consumerGroups.deleteEmptyGroups(
      (groupId) =>
        (this.groups.get(groupId)?.offsets.size ?? 0) > 0 ||
        this.pendingTxnOffsets.partitionsOf(groupId).length > 0,
    );
    return expired;
  }

  // ---- Loading from the store ---------------------------------------------------------

  restoreOffset(groupId: string, o: StoredOffset): void {
    this.offsets.restore(groupId, o);
  }

  removeRestoredOffset(groupId: string, topic: string, partition: number): void {
    this.offsets.removeRestored(groupId, topic, partition);
    this.pendingTxnOffsets.drop(groupId, topic, partition);
  }

  /** A group tombstone: the group was deleted (its offsets were tombstoned before it). */
  forgetRestoredGroup(groupId: string): void {
    const group = this.groups.get(groupId);
    if (!group || group.members.size > 0) return;
    if (group.offsets.size === 0) {
      this.groups.delete(groupId);
      return;
    }
    // An upgraded group's metadata is gone but its offsets are not (Kafka keeps them
    // apart): the group stays, as the holder of its offsets.
    group.generationId = 0;
    group.protocolType = null;
  }

  /**
   * A stored group comes back Empty with its generation and protocol type: its members'
   * sessions did not survive the restart, so they rejoin. Static members rejoin into
   * a group that remembers the generation, which keeps fencing of old generations intact.
   */
  restoreGroup(snapshot: GroupSnapshot): void {
    let group = this.groups.get(snapshot.groupId);
    if (!group) {
      group = new Group(snapshot.groupId, this.options.clock.now());
      this.groups.set(snapshot.groupId, group);
    }
    group.generationId = snapshot.generationId;
  }

  // ---- Admin ------------------------------------------------------------------------

  listGroups(): Array<{ groupId: string; protocolType: string; state: GroupState }> {
    return [...this.groups.values()]
      .filter((g) => g.state !== 'Dead')
      .map((g) => ({ groupId: g.groupId, protocolType: g.protocolType ?? '', state: g.state }));
  }

  describeGroup(groupId: string): DescribedGroup {
    const group = this.groups.get(groupId);
    if (!group) {
      return {
        groupId,
        error: 'NONE',
        state: 'Dead',
        protocolType: '',
        protocolName: '',
        members: [],
      };
    }
    const stable = group.state === 'Stable';
    return {
      groupId,
      error: 'NONE',
      state: group.state,
      protocolType: group.protocolType ?? '',
      protocolName:
        stable || group.state === 'CompletingRebalance' ? (group.protocolName ?? '') : '',
      members: [...group.members.values()].map((m) => ({
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        metadata: stable ? group.metadataFor(m, group.protocolName) : EMPTY,
        assignment: stable ? m.assignment : EMPTY,
      })),
    };
  }

  async deleteGroup(groupId: string): Promise<GroupError> {
    const group = this.groups.get(groupId);
    if (!group || group.state === 'Dead') return 'GROUP_ID_NOT_FOUND';
    if (group.state !== 'Empty') return 'NON_EMPTY_GROUP';
    // Tombstones for the partitions open transactions hold offsets for too (Kafka's
    // deleteAllOffsets): without one, a restart would find the pending offset in the
    // log and a later COMMIT marker would bring it back into a group that is gone.
    const committed = [...group.offsets.values()];
    const pendingOnly = this.pendingTxnOffsets
      .partitionsOf(groupId)
      .filter((p) => !group.offsets.has(Group.offsetKey(p.topic, p.partition)));
    await this.store?.removeOffsets(groupId, [...committed, ...pendingOnly]);
    this.pendingTxnOffsets.dropGroup(groupId);
    await this.store?.removeGroup(groupId);
    group.state = 'Dead';
    this.groups.delete(groupId);
    return 'NONE';
  }

  /** Stops every timer and answers waiting members; the coordinator takes no more requests. */
  close(): void {
    this.closed = true;
    this.consumerGroups.close();
    for (const group of this.groups.values()) {
      group.cancelJoinTimer?.();
      group.cancelSyncTimer?.();
      for (const cancel of group.pendingMembers.values()) cancel();
      for (const m of group.members.values()) {
        m.cancelSession?.();
        m.awaitingJoin?.(joinError('COORDINATOR_NOT_AVAILABLE', m.memberId));
        m.awaitingSync?.(syncError('COORDINATOR_NOT_AVAILABLE'));
        m.awaitingJoin = undefined;
        m.awaitingSync = undefined;
      }
    }
  }

  private persistGroup(group: Group): void {
    if (!this.store) return;
    const snapshot: GroupSnapshot = {
      groupId: group.groupId,
      protocolType: group.protocolType,
      protocolName: group.protocolName,
      generationId: group.generationId,
      leaderId: group.leaderId,
      members: [...group.members.values()].map((m) => ({
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        sessionTimeoutMs: m.sessionTimeoutMs,
        rebalanceTimeoutMs: m.rebalanceTimeoutMs,
        metadata: group.metadataFor(m, group.protocolName),
        assignment: m.assignment,
      })),
    };
    this.store.storeGroup(snapshot).catch((err) => {
      this.logger.error({ err, group: group.groupId }, 'could not store group metadata');
    });
  }
}

function protocolsEqual(a: ProtocolMetadata[], b: ProtocolMetadata[]): boolean {
  return (
    a.length === b.length &&
    a.every((p, i) => p.name === b[i]!.name && p.metadata.equals(b[i]!.metadata))
  );
}

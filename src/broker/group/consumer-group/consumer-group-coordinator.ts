/**
 * The coordinator of the consumer group protocol (KIP-848): ConsumerGroupHeartbeat
 * (join, heartbeat, leave), the membership checks of OffsetCommit and TxnOffsetCommit
 * for consumer groups, and ConsumerGroupDescribe. It follows Kafka's
 * GroupMetadataManager.consumerGroupHeartbeat:
 *
 * - A member joins with epoch 0, heartbeats with its epoch, leaves with -1; a static
 *   member (instance id) leaves with -2 and keeps its place and partitions until its
 *   session expires, and a new member id with the same instance id takes it over. An
 *   instance id still held by a live member answers UNRELEASED_INSTANCE_ID.
 * - Joining, leaving, a changed subscription or a subscribed topic's new partition count
 *   bumps the group epoch; the next heartbeat recomputes the target assignment with the
 *   group's assignor (`uniform` by default, or the one most members ask for) and each
 *   member reconciles towards it, revoking before it is given (reconciliation.ts).
 * - An epoch above the member's is FENCED_MEMBER_EPOCH; below it, too, unless it is
 *   the previous epoch and the member owns only partitions it still has (a lost answer).
 * - A member whose heartbeats stop for the session timeout, or that does not revoke
 *   within its rebalance timeout, is removed (fenced); it rejoins with epoch 0.
 *
 * One namespace with classic groups, and the online migration between the protocols
 * under group.consumer.migration.policy (migration.ts). A heartbeat joining a classic
 * group with members upgrades it (policy upgrade or bidirectional, protocol type
 * `consumer`); otherwise it answers GROUP_ID_NOT_FOUND, as Kafka 4.0 does. The classic
 * members then live in the consumer group and are served through JoinGroup, SyncGroup,
 * Heartbeat and LeaveGroup by classic-members.ts (which the classic coordinator routes
 * to while the consumer group has members; with the policy disabled it refuses a new
 * classic JoinGroup with INCONSISTENT_GROUP_PROTOCOL instead). When a member leaves or
 * is fenced and only classic members remain, the group is downgraded (policy downgrade
 * or bidirectional): its records are tombstoned and the classic coordinator takes it
 * over and rebalances. An empty classic group (offsets only) is taken over, as Kafka
 * 4.0 does. Committed offsets stay in the classic coordinator's offsets store under the
 * same id, whatever the group's protocol.
 *
 * Persisted as Kafka 4.0 persists it, in __consumer_offsets (consumer-group-journal.ts):
 * after every change the group's changed records are appended, and a heartbeat is
 * answered only once they are written (`stored`), so an epoch a member was told
 * survives a restart. On load every member gets a fresh session timeout (and a
 * rebalance timeout while it has partitions to revoke): one that heartbeats with its
 * epoch carries on, one that does not is removed, as in Kafka. A heartbeat with an
 * epoch for a group the broker does not know answers GROUP_ID_NOT_FOUND, as Kafka does.
 * Committed offsets stay in the classic coordinator's offsets store.
 *
 * Single-threaded: broker thread handlers and timers only; time is injected.
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../../util/clock.ts';
import type { Logger } from '../../../util/logger.ts';
import type { Timers } from '../../../util/timers.ts';
import type { Group, Member } from '../group.ts';
import {
  type Assignment,
  assignmentsEqual,
  emptyAssignment,
  fromTopicPartitions,
  isSubset,
  type TopicImage,
  toTopicPartitions,
} from './assignment.ts';
import { ASSIGNORS, type AssignorMember, assignorNamed } from './assignors.ts';
import { ClassicMembers } from './classic-members.ts';
import {
  ConsumerGroup,
  type ConsumerGroupState,
  type ConsumerMember,
  joiningMember,
  LEAVE_EPOCH,
  STATIC_LEAVE_EPOCH,
  subscriptionImage,
} from './consumer-group.ts';
import { ConsumerGroupJournal, type JournalRecord } from './consumer-group-journal.ts';
import {
  classicMembersOf,
  downgradeEnabled,
  type MigrationPolicy,
  onlyClassicMembersRemain,
  upgradeOf,
} from './migration.ts';
import { reconcile } from './reconciliation.ts';
import { compileTopicRegex, matchingTopics } from './subscription-regex.ts';

/** group.consumer.heartbeat.interval.ms, Kafka's default. */
export const DEFAULT_HEARTBEAT_INTERVAL_MS = 5_000;
/** group.consumer.session.timeout.ms, Kafka's default. */
export const DEFAULT_SESSION_TIMEOUT_MS = 45_000;

export type ConsumerGroupError =
  | 'NONE'
  | 'INVALID_REQUEST'
  | 'UNKNOWN_MEMBER_ID'
  | 'FENCED_MEMBER_EPOCH'
  | 'STALE_MEMBER_EPOCH'
  | 'UNSUPPORTED_ASSIGNOR'
  | 'UNRELEASED_INSTANCE_ID'
  | 'FENCED_INSTANCE_ID'
  | 'GROUP_ID_NOT_FOUND'
  | 'INVALID_REGULAR_EXPRESSION'
  | 'UNSUPPORTED_VERSION'
  | 'COORDINATOR_NOT_AVAILABLE';

export interface HeartbeatRequest {
  groupId: string;
  memberId: string;
  memberEpoch: number;
  instanceId: string | null;
  rackId: string | null;
  rebalanceTimeoutMs: number;
  subscribedTopicNames: string[] | null;
  subscribedTopicRegex: string | null;
  serverAssignor: string | null;
  topicPartitions: Array<{ topicId: string; partitions: number[] }> | null;
  clientId: string;
  clientHost: string;
}

export interface HeartbeatResult {
  error: ConsumerGroupError;
  errorMessage: string | null;
  memberId: string | null;
  memberEpoch: number;
  heartbeatIntervalMs: number;
  /** null when unchanged since the member's last heartbeat (and not a full request). */
  assignment: Array<{ topicId: string; partitions: number[] }> | null;
}

export interface DescribedConsumerGroup {
  groupId: string;
  error: ConsumerGroupError;
  errorMessage: string | null;
  state: ConsumerGroupState | 'Dead';
  groupEpoch: number;
  assignmentEpoch: number;
  assignorName: string;
  /** Named as ConsumerGroupDescribe's response names them, which passes them on. */
  members: Array<{
    memberId: string;
    instanceId: string | null;
    rackId: string | null;
    memberEpoch: number;
    clientId: string;
    clientHost: string;
    subscribedTopicNames: string[];
    subscribedTopicRegex: string | null;
    assignment: Assignment;
    targetAssignment: Assignment;
  }>;
}

/** Where a consumer group's records are appended (the __consumer_offsets partition of the group). */
export interface ConsumerGroupStore {
  storeConsumerGroupRecords(groupId: string, records: JournalRecord[]): Promise<void>;
}

/**
 * The classic coordinator's side of a migration (migration.ts): it gives up a classic
 * group being upgraded and takes over a consumer group being downgraded.
 */
export interface ClassicGroupMigrations {
  /**
   * Empties the classic group for its upgrade: members waiting in JoinGroup or SyncGroup
   * are answered REBALANCE_IN_PROGRESS, its timers stop and its metadata record is
   * tombstoned; its committed offsets stay.
   */
  releaseForUpgrade(group: Group): void;
  /** Makes the members a classic group at `generation` and starts a rebalance. */
  adoptDowngraded(
    groupId: string,
    generation: number,
    protocolName: string,
    members: Member[],
  ): void;
}

export interface ConsumerGroupCoordinatorOptions {
  clock: Clock;
  timers: Timers;
  logger: Logger;
  /** Without one (unit tests) nothing survives the coordinator. */
  store?: ConsumerGroupStore;
  /** The classic coordinator's groups: one namespace, and where the offsets are kept. */
  classicGroups: ReadonlyMap<string, Group>;
  heartbeatIntervalMs?: number;
  sessionTimeoutMs?: number;
  /** group.consumer.migration.policy; `disabled` when absent. */
  migrationPolicy?: MigrationPolicy;
  /** Required for any policy but `disabled`. */
  classicMigrations?: ClassicGroupMigrations;
}

function failure(error: ConsumerGroupError, errorMessage: string | null = null): HeartbeatResult {
  return {
    error,
    errorMessage,
    memberId: null,
    memberEpoch: 0,
    heartbeatIntervalMs: 0,
    assignment: null,
  };
}

export class ConsumerGroupCoordinator {
  private readonly groups = new Map<string, ConsumerGroup>();
  private readonly journal = new ConsumerGroupJournal();
  /** Per group, settles once every append made for it so far has. */
  private readonly writes = new Map<string, Promise<void>>();
  private readonly heartbeatIntervalMs: number;
  private readonly sessionTimeoutMs: number;
  private readonly migrationPolicy: MigrationPolicy;
  private closed = false;
  /** JoinGroup, SyncGroup, Heartbeat and LeaveGroup of classic members of consumer groups. */
  readonly classicMembers: ClassicMembers;

  constructor(private readonly options: ConsumerGroupCoordinatorOptions) {
    this.heartbeatIntervalMs = options.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS;
    this.sessionTimeoutMs = options.sessionTimeoutMs ?? DEFAULT_SESSION_TIMEOUT_MS;
    this.migrationPolicy = options.migrationPolicy ?? 'disabled';
    if (this.migrationPolicy !== 'disabled' && !options.classicMigrations)
      throw new Error(`migration policy ${this.migrationPolicy} needs the classic coordinator`);
    this.classicMembers = new ClassicMembers({
      timers: options.timers,
      logger: options.logger,
      group: (groupId) => (this.closed ? undefined : this.groups.get(groupId)),
      advance: (group, member, change, topics) => this.advance(group, member, change, topics),
      fence: (group, members, reason) => {
        if (this.groups.get(group.groupId) !== group) return;
        this.fenceMembers(group, members, reason);
        this.persist(group.groupId);
      },
      persist: (groupId) => this.persist(groupId),
      stored: (groupId) => this.stored(groupId),
      scheduleSession: (group, member) => this.scheduleSession(group, member),
    });
  }

  /** The policy classic JoinGroups for a consumer group with members are served under. */
  get policy(): MigrationPolicy {
    return this.migrationPolicy;
  }

  /** Whether the member is one of the group's members speaking the classic protocol. */
  isClassicMember(groupId: string, memberId: string): boolean {
    return this.groups.get(groupId)?.members.get(memberId)?.classic !== undefined;
  }

  /** Whether the id names a consumer group that has members. */
  hasMembers(groupId: string): boolean {
    return (this.groups.get(groupId)?.members.size ?? 0) > 0;
  }

  /** Whether the id names a consumer group (with or without members). */
  has(groupId: string): boolean {
    return this.groups.has(groupId);
  }

  /**
   * A classic JoinGroup for this id: allowed (and an empty consumer group given up to
   * the classic protocol) unless the consumer group has members.
   */
  yieldToClassic(groupId: string): boolean {
    const group = this.groups.get(groupId);
    if (!group) return true;
    if (group.members.size > 0) return false;
    this.groups.delete(groupId);
    this.persist(groupId);
    return true;
  }

  /**
   * DeleteGroups: an empty consumer group is forgotten, its records tombstoned (await
   * `stored` before answering); one with members is not.
   */
  deleteIfEmpty(groupId: string): 'NONE' | 'NON_EMPTY_GROUP' | 'GROUP_ID_NOT_FOUND' {
    const group = this.groups.get(groupId);
    if (!group) return 'GROUP_ID_NOT_FOUND';
    if (group.members.size > 0) return 'NON_EMPTY_GROUP';
    this.groups.delete(groupId);
    this.persist(groupId);
    return 'NONE';
  }

  /**
   * Deletes (tombstones) every group without members that `hasOffsets` says has no
   * committed or pending offsets left; resolves once the tombstones are written.
   */
  async deleteEmptyGroups(hasOffsets: (groupId: string) => boolean): Promise<string[]> {
    const deleted = [...this.groups.values()]
      .filter((g) => g.members.size === 0 && !hasOffsets(g.groupId))
      .map((g) => g.groupId);
    for (const groupId of deleted) {
      this.groups.delete(groupId);
      this.persist(groupId);
      this.options.logger.info({ group: groupId }, 'empty consumer group without offsets deleted');
    }
    await Promise.all(deleted.map((id) => this.stored(id)));
    return deleted;
  }

  /**
   * Settles when every record written so far for the group is in the store; rejects
   * when one of them could not be written.
   */
  stored(groupId: string): Promise<void> {
    return this.writes.get(groupId) ?? Promise.resolve();
  }

  /** Appends the records that bring the store to the group's state (none if unchanged). */
  private persist(groupId: string): void {
    const records = this.journal.changes(groupId, this.groups.get(groupId));
    const store = this.options.store;
    if (records.length === 0 || !store) return;
    const previous = this.writes.get(groupId) ?? Promise.resolve();
    const append = store.storeConsumerGroupRecords(groupId, records);
    const settled = Promise.all([previous.catch(() => undefined), append]).then(() => undefined);
    this.writes.set(groupId, settled);
    settled.then(
      () => {
        if (this.writes.get(groupId) === settled) this.writes.delete(groupId);
      },
      (err) => {
        if (this.writes.get(groupId) === settled) this.writes.delete(groupId);
        this.options.logger.error(
          { err, group: groupId },
          'could not store consumer group records',
        );
      },
    );
  }

  // ---- Loading --------------------------------------------------------------------------

  /** A record of __consumer_offsets, in log order; `other` when not a consumer group's. */
  replayRecord(key: Buffer, value: Buffer | null): 'applied' | 'malformed' | 'other' {
    return this.journal.replay(key, value);
  }

  /**
   * After the replay: the groups come back with their epochs, members and assignments,
   * and every member's session starts now (Kafka's onLoaded), so members that do not
   * heartbeat after the restart are removed by their session timeout.
   */
  completeLoad(): number {
    for (const group of this.journal.loadedGroups(ASSIGNORS[0]!.name)) {
      // Not a record: the assignor the members ask for, as when the target was computed.
      group.assignorName = this.groupAssignor(group).name;
      this.groups.set(group.groupId, group);
      for (const m of group.members.values()) {
        this.scheduleSession(group, m);
        if (m.state === 'UNREVOKED_PARTITIONS') this.scheduleRebalanceTimeout(group, m);
      }
      this.options.logger.info(
        { group: group.groupId, epoch: group.groupEpoch, members: group.members.size },
        'loaded consumer group',
      );
    }
    return this.groups.size;
  }

  list(): Array<{ groupId: string; state: ConsumerGroupState }> {
    return [...this.groups.values()].map((g) => ({ groupId: g.groupId, state: g.state }));
  }

  // ---- ConsumerGroupHeartbeat ---------------------------------------------------------

  /**
   * One heartbeat, answered at once; the records it changed are being written, and the
   * answer may go out once `stored(groupId)` settles (handlers/group wait for it).
   */
  heartbeat(req: HeartbeatRequest, topics: readonly TopicImage[]): HeartbeatResult {
    const result = this.beat(req, topics);
    this.persist(req.groupId);
    return result;
  }

  private beat(req: HeartbeatRequest, topics: readonly TopicImage[]): HeartbeatResult {
    if (this.closed) return failure('COORDINATOR_NOT_AVAILABLE');
    const invalid = this.validate(req);
    if (invalid) return invalid;
    if (req.memberEpoch === LEAVE_EPOCH || req.memberEpoch === STATIC_LEAVE_EPOCH) {
      return this.leave(req);
    }
    const classic = this.options.classicGroups.get(req.groupId);
    if (!this.groups.has(req.groupId) && classic && classic.members.size > 0) {
      const refused = this.upgrade(classic, req, topics);
      if (refused) return refused;
    }
    let group = this.groups.get(req.groupId);
    if (!group) {
      if (req.memberEpoch !== 0)
        return failure('GROUP_ID_NOT_FOUND', `Consumer group ${req.groupId} not found.`);
      group = new ConsumerGroup(req.groupId, ASSIGNORS[0]!.name);
      this.groups.set(req.groupId, group);
    }
    const found = this.memberFor(group, req);
    if ('error' in found) return found;
    const { member, joined } = found;
    const owned = req.topicPartitions === null ? null : fromTopicPartitions(req.topicPartitions);
    if (req.memberEpoch !== 0) {
      const fenced = this.checkEpoch(member, req.memberEpoch, owned);
      if (fenced) return fenced;
    }
    const before = member.assigned;
    const changed = this.updateMember(member, req);
    this.advance(group, member, { bumpEpoch: changed || joined, owned }, topics);
    const fullRequest =
      req.memberEpoch === 0 ||
      (req.rebalanceTimeoutMs !== -1 &&
        req.subscribedTopicNames !== null &&
        req.topicPartitions !== null);
    return {
      error: 'NONE',
      errorMessage: null,
      memberId: member.memberId,
      memberEpoch: member.memberEpoch,
      heartbeatIntervalMs: this.heartbeatIntervalMs,
      assignment:
        fullRequest || !assignmentsEqual(before, member.assigned)
          ? toTopicPartitions(member.assigned)
          : null,
    };
  }

  /**
   * After a member joined or changed (a heartbeat, or a classic member's JoinGroup):
   * the group epoch moves if its subscription did or the subscribed topics changed, the
   * target is recomputed when the epoch is ahead of it, and the member reconciles.
   */
  private advance(
    group: ConsumerGroup,
    member: ConsumerMember,
    change: { bumpEpoch: boolean; owned: Assignment | null },
    topics: readonly TopicImage[],
  ): void {
    if (change.bumpEpoch) group.groupEpoch++;
    const subscribed = this.subscribedTopicImages(group, topics);
    if (subscriptionImage(subscribed) !== group.subscribedTopicsImage) {
      group.setSubscriptionMetadata(subscribed);
      if (group.groupEpoch === group.assignmentEpoch) group.groupEpoch++;
    }
    if (group.groupEpoch > group.assignmentEpoch) this.computeTarget(group, topics);
    this.reconcileMember(group, member, change.owned);
    this.scheduleSession(group, member);
  }

  /**
   * A ConsumerGroupHeartbeat for a classic group with members: Kafka's
   * getOrMaybeCreateConsumerGroup with validateOnlineUpgrade and convertToConsumerGroup
   * (migration.ts). Null once the group is a consumer group; else the refusal.
   */
  private upgrade(
    classic: Group,
    req: HeartbeatRequest,
    topics: readonly TopicImage[],
  ): HeartbeatResult | null {
    const upgraded = upgradeOf(classic, req.memberEpoch, this.migrationPolicy, topics);
    if ('refusal' in upgraded) return failure('GROUP_ID_NOT_FOUND', upgraded.refusal);
    const { group } = upgraded;
    this.options.classicMigrations!.releaseForUpgrade(classic);
    group.assignorName = this.groupAssignor(group).name;
    this.groups.set(group.groupId, group);
    for (const m of group.members.values()) this.scheduleSession(group, m);
    this.options.logger.info(
      { group: group.groupId, epoch: group.groupEpoch, members: group.members.size },
      'classic group upgraded to a consumer group',
    );
    return null;
  }

  /**
   * Kafka's validateOnlineDowngradeWithFencedMembers and convertToClassicGroup: once
   * only classic members remain (some do) and the policy allows it, the group goes back
   * to the classic coordinator, which starts a rebalance. True when it did.
   */
  private maybeDowngrade(group: ConsumerGroup): boolean {
    if (!downgradeEnabled(this.migrationPolicy)) return false;
    if (!onlyClassicMembersRemain(group, new Set())) return false;
    // The subscribed topics name every partition of a target assignment.
    const { protocolName, members } = classicMembersOf(group, group.subscriptionMetadata);
    for (const m of group.members.values()) {
      m.cancelSession?.();
      m.cancelRebalance?.();
      m.cancelJoin?.();
      m.cancelSync?.();
    }
    this.groups.delete(group.groupId);
    // The consumer group's tombstones go first, then the classic group's metadata.
    this.persist(group.groupId);
    this.options.classicMigrations!.adoptDowngraded(
      group.groupId,
      group.groupEpoch,
      protocolName,
      members,
    );
    this.options.logger.info(
      { group: group.groupId, generation: group.groupEpoch, members: members.length },
      'consumer group downgraded to a classic group',
    );
    return true;
  }

  /** Kafka's throwIfConsumerGroupHeartbeatRequestIsInvalid. */
  private validate(req: HeartbeatRequest): HeartbeatResult | null {
    const bad = (message: string) => failure('INVALID_REQUEST', message);
    if (req.groupId === '') return bad("GroupId can't be empty.");
    if (req.instanceId === '') return bad("InstanceId can't be empty.");
    if (req.rackId === '') return bad("RackId can't be empty.");
    if (req.memberEpoch === 0) {
      if (req.rebalanceTimeoutMs === -1)
        return bad('RebalanceTimeoutMs must be provided in first request.');
      if (req.topicPartitions === null || req.topicPartitions.length > 0) {
        return bad('TopicPartitions must be empty when (re-)joining.');
      }
      if (req.subscribedTopicNames === null && req.subscribedTopicRegex === null) {
        return bad('SubscribedTopicNames or SubscribedTopicRegex must be set in first request.');
      }
    } else if (req.memberEpoch === STATIC_LEAVE_EPOCH) {
      if (req.memberId === '') return bad("MemberId can't be empty.");
      if (req.instanceId === null) return bad("InstanceId can't be null.");
    } else if (req.memberEpoch < STATIC_LEAVE_EPOCH) {
      return bad(`MemberEpoch ${req.memberEpoch} is invalid.`);
    } else if (req.memberId === '') {
      return bad("MemberId can't be empty.");
    }
    if (req.serverAssignor !== null && !assignorNamed(req.serverAssignor)) {
      return failure(
        'UNSUPPORTED_ASSIGNOR',
        `ServerAssignor ${req.serverAssignor} is not supported. Supported assignors: ${ASSIGNORS.map((a) => a.name).join(', ')}.`,
      );
    }
    if (req.subscribedTopicRegex !== null && req.subscribedTopicRegex !== '') {
      const compiled = compileTopicRegex(req.subscribedTopicRegex);
      if (!compiled.ok) {
        return failure(
          'INVALID_REGULAR_EXPRESSION',
          `SubscribedTopicRegex \`${req.subscribedTopicRegex}\` is not a valid regular expression: ${compiled.reason}.`,
        );
      }
    }
    return null;
  }

  private memberFor(
    group: ConsumerGroup,
    req: HeartbeatRequest,
  ): { member: ConsumerMember; joined: boolean } | HeartbeatResult {
    if (req.instanceId !== null) {
      const heldBy = group.staticMembers.get(req.instanceId);
      const holder = heldBy === undefined ? undefined : group.members.get(heldBy);
      if (req.memberEpoch === 0) {
        if (holder && holder.memberId === req.memberId) return this.rejoin(group, holder);
        const member = this.newMember(req);
        if (!holder) {
          group.addMember(member);
          return { member, joined: true };
        }
        if (holder.memberEpoch !== STATIC_LEAVE_EPOCH) {
          return failure(
            'UNRELEASED_INSTANCE_ID',
            `Static member ${holder.memberId} with instance id ${req.instanceId} is not released yet.`,
          );
        }
        // Same subscription as its predecessor unless the request changes it.
        member.subscribedTopicNames = holder.subscribedTopicNames;
        member.subscribedTopicRegex = holder.subscribedTopicRegex;
        member.serverAssignor = holder.serverAssignor;
        group.replaceStaticMember(holder, member);
        return { member, joined: false };
      }
      if (!holder) return failure('UNKNOWN_MEMBER_ID', `Instance id ${req.instanceId} is unknown.`);
      if (holder.memberId !== req.memberId) {
        return failure(
          'FENCED_INSTANCE_ID',
          `Static member ${req.memberId} with instance id ${req.instanceId} was fenced by member ${holder.memberId}.`,
        );
      }
      return { member: holder, joined: false };
    }
    const existing = req.memberId === '' ? undefined : group.members.get(req.memberId);
    if (req.memberEpoch === 0) {
      if (existing) return this.rejoin(group, existing);
      const member = this.newMember(req);
      group.addMember(member);
      return { member, joined: true };
    }
    if (!existing) {
      return failure(
        'UNKNOWN_MEMBER_ID',
        `Member ${req.memberId} is not a member of group ${req.groupId}.`,
      );
    }
    return { member: existing, joined: false };
  }

  /** Epoch 0 from a known member (fenced, it rejoins with its id): it owns nothing now. */
  private rejoin(
    group: ConsumerGroup,
    member: ConsumerMember,
  ): { member: ConsumerMember; joined: boolean } {
    member.cancelRebalance?.();
    member.cancelRebalance = undefined;
    group.setReconciled(member, {
      state: 'STABLE',
      memberEpoch: 0,
      assigned: emptyAssignment(),
      pendingRevocation: emptyAssignment(),
    });
    return { member, joined: false };
  }

  private newMember(req: HeartbeatRequest): ConsumerMember {
    return joiningMember({
      // Before KIP-1082 the coordinator names members; later clients name themselves.
      memberId: req.memberId === '' ? randomUUID() : req.memberId,
      instanceId: req.instanceId,
      rackId: req.rackId,
      clientId: req.clientId,
      clientHost: req.clientHost,
      rebalanceTimeoutMs: req.rebalanceTimeoutMs,
    });
  }

  /** Kafka's throwIfMemberEpochIsInvalid. */
  private checkEpoch(
    member: ConsumerMember,
    received: number,
    owned: Assignment | null,
  ): HeartbeatResult | null {
    if (received > member.memberEpoch) {
      return failure(
        'FENCED_MEMBER_EPOCH',
        `The consumer group member has a greater member epoch (${received}) than the one known by the group coordinator (${member.memberEpoch}). The member must abandon all its partitions and rejoin.`,
      );
    }
    if (received < member.memberEpoch) {
      const lostAnswer =
        received === member.previousMemberEpoch &&
        owned !== null &&
        isSubset(owned, member.assigned);
      if (!lostAnswer) {
        return failure(
          'FENCED_MEMBER_EPOCH',
          `The consumer group member has a smaller member epoch (${received}) than the one known by the group coordinator (${member.memberEpoch}). The member must abandon all its partitions and rejoin.`,
        );
      }
    }
    return null;
  }

  /** Applies the request's changed fields; true when the subscription changed. */
  private updateMember(member: ConsumerMember, req: HeartbeatRequest): boolean {
    let changed = false;
    if (req.rackId !== null) member.rackId = req.rackId;
    if (req.rebalanceTimeoutMs !== -1) member.rebalanceTimeoutMs = req.rebalanceTimeoutMs;
    member.clientId = req.clientId;
    member.clientHost = req.clientHost;
    if (req.subscribedTopicNames !== null) {
      const names = [...new Set(req.subscribedTopicNames)].sort();
      if (names.join('\0') !== member.subscribedTopicNames.join('\0')) changed = true;
      member.subscribedTopicNames = names;
    }
    if (req.subscribedTopicRegex !== null) {
      const regex = req.subscribedTopicRegex === '' ? null : req.subscribedTopicRegex;
      if (regex !== member.subscribedTopicRegex) changed = true;
      member.subscribedTopicRegex = regex;
    }
    if (req.serverAssignor !== null && req.serverAssignor !== member.serverAssignor) {
      member.serverAssignor = req.serverAssignor;
      changed = true;
    }
    return changed;
  }

  /** The topic names a member subscribes to: its names and its regex's matches. */
  private subscribedNames(member: ConsumerMember, topics: readonly TopicImage[]): Set<string> {
    const names = new Set(member.subscribedTopicNames);
    if (member.subscribedTopicRegex !== null) {
      const compiled = compileTopicRegex(member.subscribedTopicRegex);
      if (compiled.ok) {
        for (const n of matchingTopics(
          compiled.regex,
          topics.map((t) => t.name),
        ))
          names.add(n);
      }
    }
    return names;
  }

  /** Subscribed topics with their ids and partition counts, to see metadata changes. */
  private subscribedTopicImages(group: ConsumerGroup, topics: readonly TopicImage[]): TopicImage[] {
    const wanted = new Set<string>();
    for (const m of group.members.values())
      for (const n of this.subscribedNames(m, topics)) wanted.add(n);
    return topics.filter((t) => wanted.has(t.name));
  }

  private computeTarget(group: ConsumerGroup, topics: readonly TopicImage[]): void {
    const byName = new Map(topics.map((t) => [t.name, t]));
    const members: AssignorMember[] = [...group.members.values()].map((m) => {
      const ids = new Set<string>();
      for (const n of this.subscribedNames(m, topics)) {
        const t = byName.get(n);
        if (t) ids.add(t.topicId);
      }
      return {
        memberId: m.memberId,
        subscribedTopicIds: ids,
        previous: group.targetOf(m.memberId),
      };
    });
    const assignor = this.groupAssignor(group);
    const target = assignor.assign(members, new Map(topics.map((t) => [t.topicId, t.partitions])));
    group.targetAssignment.clear();
    for (const [memberId, a] of target) group.targetAssignment.set(memberId, a);
    group.assignorName = assignor.name;
    group.assignmentEpoch = group.groupEpoch;
    this.options.logger.debug(
      {
        group: group.groupId,
        epoch: group.groupEpoch,
        assignor: assignor.name,
        members: members.length,
      },
      'consumer group target assignment computed',
    );
  }

  /** The assignor most members ask for (the first such in Kafka's order), else `uniform`. */
  private groupAssignor(group: ConsumerGroup) {
    const votes = new Map<string, number>();
    for (const m of group.members.values()) {
      if (m.serverAssignor !== null)
        votes.set(m.serverAssignor, (votes.get(m.serverAssignor) ?? 0) + 1);
    }
    let best = ASSIGNORS[0]!;
    let bestVotes = 0;
    for (const a of ASSIGNORS) {
      const v = votes.get(a.name) ?? 0;
      if (v > bestVotes) {
        best = a;
        bestVotes = v;
      }
    }
    return best;
  }

  private reconcileMember(
    group: ConsumerGroup,
    member: ConsumerMember,
    owned: Assignment | null,
  ): void {
    const next = reconcile({
      state: member.state,
      memberEpoch: member.memberEpoch,
      assigned: member.assigned,
      pendingRevocation: member.pendingRevocation,
      targetEpoch: group.assignmentEpoch,
      target: group.targetOf(member.memberId),
      owned,
      ownedByAnother: (topicId, p) => {
        const owner = group.ownerOf(topicId, p);
        return owner !== undefined && owner !== member.memberId;
      },
    });
    const wasRevoking = member.state === 'UNREVOKED_PARTITIONS';
    group.setReconciled(member, next);
    if (next.state === 'UNREVOKED_PARTITIONS' && !wasRevoking) {
      this.scheduleRebalanceTimeout(group, member);
    } else if (next.state !== 'UNREVOKED_PARTITIONS') {
      member.cancelRebalance?.();
      member.cancelRebalance = undefined;
    }
  }

  /** A member told to revoke must have done so within its rebalance timeout. */
  private scheduleRebalanceTimeout(group: ConsumerGroup, member: ConsumerMember): void {
    const epoch = member.memberEpoch;
    member.cancelRebalance?.();
    member.cancelRebalance = this.options.timers.schedule(member.rebalanceTimeoutMs, () => {
      member.cancelRebalance = undefined;
      if (group.members.get(member.memberId) !== member) return;
      if (member.state !== 'UNREVOKED_PARTITIONS' || member.memberEpoch !== epoch) return;
      this.fence(group, member, 'did not revoke its partitions within the rebalance timeout');
      this.persist(group.groupId);
    });
  }

  /** A classic member's session timeout is its JoinGroup's. */
  private scheduleSession(group: ConsumerGroup, member: ConsumerMember): void {
    member.cancelSession?.();
    const timeoutMs = member.classic?.sessionTimeoutMs ?? this.sessionTimeoutMs;
    member.cancelSession = this.options.timers.schedule(timeoutMs, () => {
      member.cancelSession = undefined;
      if (group.members.get(member.memberId) !== member) return;
      this.fence(group, member, 'session timeout');
      this.persist(group.groupId);
    });
  }

  private fence(group: ConsumerGroup, member: ConsumerMember, reason: string): void {
    this.fenceMembers(group, [member], reason);
  }

  /**
   * Removes members; the group epoch moves so the others get their partitions, unless
   * only classic members remain and the group is downgraded instead.
   */
  private fenceMembers(group: ConsumerGroup, members: ConsumerMember[], reason: string): void {
    for (const member of members) {
      group.removeMember(member);
      this.options.logger.info(
        { group: group.groupId, member: member.memberId, reason },
        'consumer group member removed',
      );
    }
    if (this.maybeDowngrade(group)) return;
    group.groupEpoch++;
    if (group.members.size === 0) {
      // Offsets of an empty group start ageing now (offsets.retention.minutes).
      const offsets = this.options.classicGroups.get(group.groupId);
      if (offsets) offsets.emptySince = this.options.clock.now();
    }
  }

  private leave(req: HeartbeatRequest): HeartbeatResult {
    const group = this.groups.get(req.groupId);
    const member = group?.members.get(req.memberId);
    if (!group || !member) {
      return failure(
        'UNKNOWN_MEMBER_ID',
        `Member ${req.memberId} is not a member of group ${req.groupId}.`,
      );
    }
    if (req.instanceId !== null && group.staticMembers.get(req.instanceId) !== member.memberId) {
      return failure(
        'FENCED_INSTANCE_ID',
        `Static member ${req.memberId} with instance id ${req.instanceId} was fenced by another member.`,
      );
    }
    const done = (memberEpoch: number): HeartbeatResult => ({
      error: 'NONE',
      errorMessage: null,
      memberId: member.memberId,
      memberEpoch,
      heartbeatIntervalMs: 0,
      assignment: null,
    });
    if (req.memberEpoch === STATIC_LEAVE_EPOCH) {
      // It keeps its place and partitions until its session expires or it comes back.
      member.cancelRebalance?.();
      member.cancelRebalance = undefined;
      member.previousMemberEpoch = member.memberEpoch;
      member.memberEpoch = STATIC_LEAVE_EPOCH;
      return done(STATIC_LEAVE_EPOCH);
    }
    this.fence(group, member, 'left the group');
    return done(LEAVE_EPOCH);
  }

  // ---- Offsets and describe -------------------------------------------------------------

  /**
   * Whether this commit may proceed (Kafka's ConsumerGroup.validateOffsetCommit), or
   * undefined when the id is not a consumer group. The generation id field carries the
   * member epoch. Members must commit with OffsetCommit v9+ (transactional ones with any
   * TxnOffsetCommit version); a commit without member and epoch is allowed only while
   * the group has no members.
   */
  offsetCommitError(req: {
    groupId: string;
    memberId: string;
    generationId: number;
    apiVersion?: number;
    transactional?: boolean;
  }):
    | 'NONE'
    | 'UNKNOWN_MEMBER_ID'
    | 'FENCED_MEMBER_EPOCH'
    | 'STALE_MEMBER_EPOCH'
    | 'UNSUPPORTED_VERSION'
    | 'ILLEGAL_GENERATION'
    | undefined {
    const group = this.groups.get(req.groupId);
    if (!group) return undefined;
    if (req.transactional && req.generationId < 0 && req.memberId === '') return 'NONE';
    if (req.generationId < 0 && group.members.size === 0) return 'NONE';
    const member = group.members.get(req.memberId);
    if (!member) return 'UNKNOWN_MEMBER_ID';
    // A classic member commits with its generation, any version (Kafka's validateMemberEpoch).
    if (member.classic)
      return req.generationId === member.memberEpoch ? 'NONE' : 'ILLEGAL_GENERATION';
    if (!req.transactional && (req.apiVersion ?? 0) < 9) return 'UNSUPPORTED_VERSION';
    if (req.generationId > member.memberEpoch) return 'FENCED_MEMBER_EPOCH';
    if (req.generationId < member.memberEpoch) return 'STALE_MEMBER_EPOCH';
    return 'NONE';
  }

  /**
   * Whether an OffsetFetch (v9+ names the member) may read this group's offsets, or
   * undefined when the id is not a consumer group (Kafka's ConsumerGroup
   * .validateOffsetFetch). A null member id with a negative epoch is an admin client
   * or a client before v9, and may; otherwise the member must exist and name its
   * current epoch exactly, ahead or behind alike.
   */
  offsetFetchError(
    groupId: string,
    memberId: string | null,
    memberEpoch: number,
  ): 'NONE' | 'UNKNOWN_MEMBER_ID' | 'STALE_MEMBER_EPOCH' | 'ILLEGAL_GENERATION' | undefined {
    const group = this.groups.get(groupId);
    if (!group) return undefined;
    if (memberId === null && memberEpoch < 0) return 'NONE';
    const member = memberId === null ? undefined : group.members.get(memberId);
    if (!member) return 'UNKNOWN_MEMBER_ID';
    if (memberEpoch === member.memberEpoch) return 'NONE';
    // A classic member names its generation (Kafka's validateMemberEpoch).
    return member.classic ? 'ILLEGAL_GENERATION' : 'STALE_MEMBER_EPOCH';
  }

  /** Topics the group's members subscribe to (OffsetDelete keeps their offsets). */
  subscribedTopics(groupId: string, topics: readonly TopicImage[]): Set<string> {
    const out = new Set<string>();
    for (const m of this.groups.get(groupId)?.members.values() ?? []) {
      for (const name of this.subscribedNames(m, topics)) out.add(name);
    }
    return out;
  }

  /** Offsets of groups with members do not age: they are in use. */
  holdOffsetsOfActiveGroups(): void {
    const now = this.options.clock.now();
    for (const group of this.groups.values()) {
      const offsets = this.options.classicGroups.get(group.groupId);
      if (group.members.size > 0 && offsets) offsets.emptySince = now;
    }
  }

  describe(groupId: string): DescribedConsumerGroup {
    const group = this.groups.get(groupId);
    if (!group) {
      const classic = this.options.classicGroups.has(groupId);
      return {
        groupId,
        error: 'GROUP_ID_NOT_FOUND',
        errorMessage: classic
          ? `Group ${groupId} is not a consumer group.`
          : `Group ${groupId} not found.`,
        state: 'Dead',
        groupEpoch: -1,
        assignmentEpoch: -1,
        assignorName: '',
        members: [],
      };
    }
    return {
      groupId,
      error: 'NONE',
      errorMessage: null,
      state: group.state,
      groupEpoch: group.groupEpoch,
      assignmentEpoch: group.assignmentEpoch,
      assignorName: group.assignorName,
      members: [...group.members.values()].map((m) => ({
        memberId: m.memberId,
        instanceId: m.instanceId,
        rackId: m.rackId,
        memberEpoch: m.memberEpoch,
        clientId: m.clientId,
        clientHost: m.clientHost,
        subscribedTopicNames: m.subscribedTopicNames,
        subscribedTopicRegex: m.subscribedTopicRegex,
        assignment: m.assigned,
        targetAssignment: group.targetOf(m.memberId),
      })),
    };
  }

  /** Stops every member's timers; the coordinator takes no more heartbeats. */
  close(): void {
    this.closed = true;
    for (const group of this.groups.values()) {
      for (const m of group.members.values()) {
        m.cancelSession?.();
        m.cancelRebalance?.();
        m.cancelJoin?.();
        m.cancelSync?.();
      }
    }
  }
}

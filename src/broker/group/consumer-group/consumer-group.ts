/**
 * One consumer group of the KIP-848 protocol as the coordinator holds it: members with
 * their epochs and subscriptions, the group epoch, the target assignment computed at
 * the assignment epoch, and who owns each partition.
 *
 * Epochs: the group epoch moves on every membership or subscription change (and when
 * a subscribed topic's partition count changes); the target assignment is recomputed
 * when the group epoch is ahead of the assignment epoch and then carries the group
 * epoch; each member's epoch reaches the assignment epoch once it has reconciled.
 *
 * Invariants: `owners` maps every partition that some member has assigned or pending
 * revocation to that one member (updated only through `setReconciled` and
 * `removeMember`); `staticMembers` maps each instance id to the member holding it.
 * Committed offsets are not here: they stay with the coordinator's offsets
 * (group-offsets.ts) under the same group id.
 * Owned by the ConsumerGroupCoordinator, on the broker thread.
 */
import { type Assignment, emptyAssignment, partitionsOf, type TopicImage } from './assignment.ts';
import type { MemberState, ReconciledMember } from './reconciliation.ts';

/**
 * What a member that speaks the classic protocol (JoinGroup, SyncGroup, Heartbeat)
 * inside a consumer group brings from its JoinGroup: Kafka's ClassicMemberMetadata,
 * stored in its ConsumerGroupMemberMetadata record (classic-members.ts serves it).
 */
export interface ClassicMemberMetadata {
  sessionTimeoutMs: number;
  /** The JoinGroup's protocols, in the member's order of preference. */
  protocols: Array<{ name: string; metadata: Buffer }>;
}

/** The member epoch a static member leaves with, keeping its place (KIP-848). */
export const STATIC_LEAVE_EPOCH = -2;
export const LEAVE_EPOCH = -1;

/** Subscribed topics in a form that compares equal exactly when nothing changed. */
export function subscriptionImage(topics: readonly TopicImage[]): string {
  return topics
    .map((t) => `${t.name}/${t.topicId}/${t.partitions}`)
    .sort()
    .join('\0');
}

export interface ConsumerMember {
  memberId: string;
  instanceId: string | null;
  rackId: string | null;
  clientId: string;
  clientHost: string;
  rebalanceTimeoutMs: number;
  subscribedTopicNames: string[];
  subscribedTopicRegex: string | null;
  serverAssignor: string | null;
  state: MemberState;
  memberEpoch: number;
  previousMemberEpoch: number;
  assigned: Assignment;
  pendingRevocation: Assignment;
  /** Set for a member that speaks the classic protocol; absent for a KIP-848 one. */
  classic?: ClassicMemberMetadata;
  cancelSession?: () => void;
  cancelRebalance?: () => void;
  /** A classic member told to rejoin must send JoinGroup within its rebalance timeout. */
  cancelJoin?: () => void;
  /** A classic member that joined must send SyncGroup within its rebalance timeout. */
  cancelSync?: () => void;
}

/** Who a member is, as its first heartbeat or JoinGroup says. */
export type JoiningIdentity = Pick<
  ConsumerMember,
  'memberId' | 'instanceId' | 'rackId' | 'clientId' | 'clientHost' | 'rebalanceTimeoutMs'
>;

/** A member joining: no subscription or assignment yet, at epoch 0. */
export function joiningMember(identity: JoiningIdentity): ConsumerMember {
  return {
    ...identity,
    subscribedTopicNames: [],
    subscribedTopicRegex: null,
    serverAssignor: null,
    state: 'STABLE',
    memberEpoch: 0,
    previousMemberEpoch: -1,
    assigned: emptyAssignment(),
    pendingRevocation: emptyAssignment(),
  };
}

/** Kafka's ConsumerGroupState names, as ListGroups and the describes answer them. */
export type ConsumerGroupState = 'Empty' | 'Assigning' | 'Reconciling' | 'Stable';

export class ConsumerGroup {
  groupEpoch = 0;
  assignmentEpoch = 0;
  /** The assignor that computed the target assignment. */
  assignorName: string;
  readonly members = new Map<string, ConsumerMember>();
  readonly staticMembers = new Map<string, string>();
  readonly targetAssignment = new Map<string, Assignment>();
  /** `topicId:partition` -> member id, for partitions assigned or pending revocation. */
  private readonly owners = new Map<string, string>();
  /**
   * The subscribed topics (ids, partition counts) when the target was last computed,
   * Kafka's subscription metadata; `subscribedTopicsImage` is its comparable form.
   */
  subscriptionMetadata: readonly TopicImage[] = [];
  subscribedTopicsImage = '';

  constructor(
    readonly groupId: string,
    defaultAssignor: string,
  ) {
    this.assignorName = defaultAssignor;
  }

  get state(): ConsumerGroupState {
    if (this.members.size === 0) return 'Empty';
    if (this.groupEpoch !== this.assignmentEpoch) return 'Assigning';
    for (const m of this.members.values()) {
      if (m.state !== 'STABLE' || m.memberEpoch !== this.assignmentEpoch) return 'Reconciling';
    }
    return 'Stable';
  }

  setSubscriptionMetadata(topics: readonly TopicImage[]): void {
    this.subscriptionMetadata = topics;
    this.subscribedTopicsImage = subscriptionImage(topics);
  }

  ownerOf(topicId: string, partition: number): string | undefined {
    return this.owners.get(`${topicId}:${partition}`);
  }

  targetOf(memberId: string): Assignment {
    return this.targetAssignment.get(memberId) ?? emptyAssignment();
  }

  /** Applies a reconciliation result, moving the member's partition ownership with it. */
  setReconciled(member: ConsumerMember, next: ReconciledMember): void {
    this.releaseAll(member);
    if (next.memberEpoch !== member.memberEpoch) {
      member.previousMemberEpoch = member.memberEpoch;
      member.memberEpoch = next.memberEpoch;
    }
    member.state = next.state;
    member.assigned = next.assigned;
    member.pendingRevocation = next.pendingRevocation;
    for (const [topicId, p] of partitionsOf(member.assigned)) {
      this.owners.set(`${topicId}:${p}`, member.memberId);
    }
    for (const [topicId, p] of partitionsOf(member.pendingRevocation)) {
      this.owners.set(`${topicId}:${p}`, member.memberId);
    }
  }

  addMember(member: ConsumerMember): void {
    this.members.set(member.memberId, member);
    if (member.instanceId !== null) this.staticMembers.set(member.instanceId, member.memberId);
  }

  /** Drops a member and everything it owned; the caller bumps the group epoch. */
  removeMember(member: ConsumerMember): void {
    member.cancelSession?.();
    member.cancelRebalance?.();
    member.cancelJoin?.();
    member.cancelSync?.();
    this.releaseAll(member);
    this.members.delete(member.memberId);
    this.targetAssignment.delete(member.memberId);
    if (
      member.instanceId !== null &&
      this.staticMembers.get(member.instanceId) === member.memberId
    ) {
      this.staticMembers.delete(member.instanceId);
    }
  }

  /**
   * A static member rejoining under a new member id takes over its predecessor's
   * place: its assignment and target move over, and the group epoch stays.
   */
  replaceStaticMember(old: ConsumerMember, replacement: ConsumerMember): void {
    const target = this.targetAssignment.get(old.memberId);
    // The restarted instance owns nothing yet: it gets the old assignment back at epoch
    // 0 and reaches the target epoch at once, as any member joining with its partitions.
    const reconciled: ReconciledMember = {
      state: 'STABLE',
      memberEpoch: 0,
      assigned: old.assigned,
      pendingRevocation: emptyAssignment(),
    };
    this.removeMember(old);
    this.addMember(replacement);
    if (target) this.targetAssignment.set(replacement.memberId, target);
    this.setReconciled(replacement, reconciled);
  }

  private releaseAll(member: ConsumerMember): void {
    for (const [topicId, p] of partitionsOf(member.assigned)) {
      if (this.ownerOf(topicId, p) === member.memberId) this.owners.delete(`${topicId}:${p}`);
    }
    for (const [topicId, p] of partitionsOf(member.pendingRevocation)) {
      if (this.ownerOf(topicId, p) === member.memberId) this.owners.delete(`${topicId}:${p}`);
    }
  }
}

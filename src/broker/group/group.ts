/**
 * One classic consumer group as the coordinator sees it: members, generation, chosen
 * protocol, leader, and committed offsets. The group is generic over the protocol
 * type (`consumer`, `connect`, ...): member metadata and assignments are opaque bytes.
 *
 * States (Kafka's classic protocol):
 *   Empty ──join──> PreparingRebalance ──all joined / timeout──> CompletingRebalance
 *   CompletingRebalance ──leader's SyncGroup──> Stable
 *   Stable / CompletingRebalance ──join, leave, session expiry──> PreparingRebalance
 *   PreparingRebalance ──nobody rejoined──> Empty;  any ──deleted──> Dead
 *
 * Invariants: every member in `members` has a unique id; `staticMembers` maps each
 * group.instance.id to the member currently holding it; `leaderId` is a member while
 * the group has members; a generation's assignment is handed out only in Stable.
 * Owned by the GroupCoordinator, on the broker thread; nothing else mutates it.
 */
import { decodeConsumerSubscription } from '../../protocol/consumer-protocol.ts';

export type GroupState = 'Empty' | 'PreparingRebalance' | 'CompletingRebalance' | 'Stable' | 'Dead';

/** Kafka error names as answers; the request handlers map them to codes. */
export type GroupError =
  | 'NONE'
  | 'UNKNOWN_MEMBER_ID'
  | 'ILLEGAL_GENERATION'
  | 'REBALANCE_IN_PROGRESS'
  | 'INCONSISTENT_GROUP_PROTOCOL'
  | 'INVALID_SESSION_TIMEOUT'
  | 'MEMBER_ID_REQUIRED'
  | 'FENCED_INSTANCE_ID'
  | 'COORDINATOR_NOT_AVAILABLE'
  | 'GROUP_ID_NOT_FOUND'
  | 'NON_EMPTY_GROUP'
  | 'INVALID_GROUP_ID'
  | 'OFFSET_METADATA_TOO_LARGE'
  | 'GROUP_SUBSCRIBED_TO_TOPIC'
  | 'UNKNOWN_TOPIC_OR_PARTITION'
  // OffsetCommit by consumer group members (KIP-848, consumer-group/).
  | 'FENCED_MEMBER_EPOCH'
  | 'STALE_MEMBER_EPOCH'
  | 'UNSUPPORTED_VERSION';

export interface ProtocolMetadata {
  name: string;
  metadata: Buffer;
}

export interface JoinResult {
  error: GroupError;
  generationId: number;
  protocolType: string | null;
  protocolName: string | null;
  leaderId: string;
  memberId: string;
  /** Filled for the leader only: every member with its metadata for the chosen protocol. */
  members: Array<{ memberId: string; groupInstanceId: string | null; metadata: Buffer }>;
  /**
   * KIP-814: the static leader rejoined a stable group unchanged; it gets the members
   * but must not assign (the group keeps its assignment). JoinGroup v9+ says so;
   * older versions answer no members instead, as before KIP-814.
   */
  skipAssignment?: boolean;
}

export interface SyncResult {
  error: GroupError;
  protocolType: string | null;
  protocolName: string | null;
  assignment: Buffer;
}

export interface Member {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  protocolType: string;
  protocols: ProtocolMetadata[];
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  assignment: Buffer;
  /** Set while the member waits for the rebalance to complete. */
  awaitingJoin?: (result: JoinResult) => void;
  /** Set while the member waits for the leader's assignment. */
  awaitingSync?: (result: SyncResult) => void;
  cancelSession?: () => void;
}

export interface CommittedOffset {
  offset: number;
  leaderEpoch: number;
  metadata: string | null;
  commitTimestamp: number;
  /**
   * Offset in __consumer_offsets of the batch that wrote it (Kafka's
   * appendedBatchOffset): when a transaction commits, its offset replaces the
   * committed one only if it was written after it, so a plain OffsetCommit that landed
   * between a TxnOffsetCommit and its marker wins, live and after a replay alike.
   */
  logOffset: number;
}

const EMPTY = Buffer.alloc(0);

export class Group {
  state: GroupState = 'Empty';
  generationId = 0;
  protocolType: string | null = null;
  protocolName: string | null = null;
  leaderId: string | null = null;
  readonly members = new Map<string, Member>();
  /** Member ids handed out with MEMBER_ID_REQUIRED, not yet joined; value cancels expiry. */
  readonly pendingMembers = new Map<string, () => void>();
  readonly staticMembers = new Map<string, string>();
  /** Committed offsets keyed by `topic\0partition`. */
  readonly offsets = new Map<string, CommittedOffset & { topic: string; partition: number }>();
  /** When the group last became Empty, for offset expiry. */
  emptySince: number;
  cancelJoinTimer?: () => void;
  /**
   * Members of the current generation that have not sent SyncGroup yet. A member that
   * stays silent past the rebalance timeout is removed (Kafka's pending-sync timeout),
   * so a leader that never sends the assignment cannot hold the group forever.
   */
  readonly pendingSync = new Set<string>();
  cancelSyncTimer?: () => void;
  /** True while the first rebalance of an empty group waits for more members. */
  initialDelayActive = false;

  constructor(
    readonly groupId: string,
    now: number,
  ) {
    this.emptySince = now;
  }

  static offsetKey(topic: string, partition: number): string {
    return `${topic}\u0000${partition}`;
  }

  /**
   * KIP-345 fencing: a request naming `groupInstanceId` with a member id other than the
   * one holding that instance comes from a member that was replaced (the instance
   * restarted elsewhere). The coordinator asks this before whether it knows the member
   * id at all, because the replaced id is gone from `members`: answered
   * UNKNOWN_MEMBER_ID, a client would rejoin and take the instance back, while
   * FENCED_INSTANCE_ID is fatal to it.
   */
  isStaticMemberFenced(memberId: string, groupInstanceId: string | null): boolean {
    if (groupInstanceId === null) return false;
    const holder = this.staticMembers.get(groupInstanceId);
    return holder !== undefined && holder !== memberId;
  }

  /** A protocol type and list this group can accept from a joining member. */
  supportsProtocols(protocolType: string, protocols: ProtocolMetadata[]): boolean {
    if (protocols.length === 0 || protocolType === '') return false;
    if (this.members.size === 0) return true;
    if (this.protocolType !== protocolType) return false;
    return this.candidateProtocols().some((p) => protocols.some((q) => q.name === p));
  }

  /** Protocols every member lists. */
  candidateProtocols(): string[] {
    const all = [...this.members.values()];
    if (all.length === 0) return [];
    return all[0]!.protocols
      .map((p) => p.name)
      .filter((name) => all.every((m) => m.protocols.some((p) => p.name === name)));
  }

  /** Each member votes for its most preferred candidate; the most votes wins (first on ties). */
  selectProtocol(): string {
    const candidates = this.candidateProtocols();
    const votes = new Map<string, number>(candidates.map((c) => [c, 0]));
    for (const m of this.members.values()) {
      const choice = m.protocols.find((p) => votes.has(p.name))!.name;
      votes.set(choice, votes.get(choice)! + 1);
    }
    let best = candidates[0]!;
    for (const c of candidates) if (votes.get(c)! > votes.get(best)!) best = c;
    return best;
  }

  metadataFor(member: Member, protocolName: string | null): Buffer {
    return member.protocols.find((p) => p.name === protocolName)?.metadata ?? EMPTY;
  }

  allMembersJoined(): boolean {
    if (this.pendingMembers.size > 0) return false;
    for (const m of this.members.values()) if (!m.awaitingJoin) return false;
    return true;
  }

  maxRebalanceTimeoutMs(): number {
    let max = 0;
    for (const m of this.members.values()) max = Math.max(max, m.rebalanceTimeoutMs);
    return max;
  }

  /** Topics a consumer-protocol group is subscribed to, from its members' metadata. */
  subscribedTopics(): Set<string> | null {
    if (this.protocolType !== 'consumer' || this.protocolName === null) return null;
    const topics = new Set<string>();
    for (const m of this.members.values()) {
      for (const t of decodeConsumerSubscription(this.metadataFor(m, this.protocolName)))
        topics.add(t);
    }
    return topics;
  }
}

/** A JoinGroup answer that is only an error. */
export function joinError(error: GroupError, memberId: string): JoinResult {
  return {
    error,
    generationId: -1,
    protocolType: null,
    protocolName: null,
    leaderId: '',
    memberId,
    members: [],
  };
}

/** A SyncGroup answer that is only an error. */
export function syncError(error: GroupError): SyncResult {
  return { error, protocolType: null, protocolName: null, assignment: Buffer.alloc(0) };
}

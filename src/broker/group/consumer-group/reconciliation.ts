/**
 * Member reconciliation (Kafka's CurrentAssignmentBuilder): how a member moves from
 * its current assignment to its target one, one heartbeat at a time.
 *
 * Invariant: a partition is owned by at most one member at a time. A member is given a
 * partition of its target only once no other member has it assigned or pending
 * revocation, so revocation always comes first:
 *
 *   STABLE ──new target epoch──> UNREVOKED_PARTITIONS   when it must give some up: it
 *                                                       keeps current ∩ target at its
 *                                                       old epoch and is told to revoke
 *          ──new target epoch──> UNRELEASED_PARTITIONS  when some target partitions are
 *                                                       still someone else's: it moves to
 *                                                       the target epoch with the free ones
 *          ──new target epoch──> STABLE                 with the whole target
 *   UNREVOKED_PARTITIONS ──heartbeat no longer owning them──> (as from STABLE)
 *   UNRELEASED_PARTITIONS ──heartbeat──> (as from STABLE, picking up released ones)
 *
 * The member epoch moves to the target epoch only once nothing is left to revoke.
 * `owned` is what the member's heartbeat reports owning; null means it did not say,
 * which counts as still owning what it was asked to revoke.
 * Pure: the caller applies the result and keeps the partition owners up to date.
 */
import {
  type Assignment,
  addPartition,
  emptyAssignment,
  hasPartition,
  partitionCount,
} from './assignment.ts';

export type MemberState = 'STABLE' | 'UNREVOKED_PARTITIONS' | 'UNRELEASED_PARTITIONS';

export interface ReconciledMember {
  state: MemberState;
  memberEpoch: number;
  assigned: Assignment;
  pendingRevocation: Assignment;
}

export interface ReconcileInput extends ReconciledMember {
  targetEpoch: number;
  target: Assignment;
  owned: Assignment | null;
  /** Whether another member has the partition assigned or pending revocation. */
  ownedByAnother(topicId: string, partition: number): boolean;
}

/** The member's next state; the same values when nothing changes. */
export function reconcile(m: ReconcileInput): ReconciledMember {
  switch (m.state) {
    case 'STABLE':
      if (m.memberEpoch !== m.targetEpoch) return nextAssignment(m);
      return unchanged(m);
    case 'UNREVOKED_PARTITIONS':
      if (stillOwnsAny(m.owned, m.pendingRevocation)) return unchanged(m);
      return nextAssignment(m);
    case 'UNRELEASED_PARTITIONS':
      return nextAssignment(m);
  }
}

function unchanged(m: ReconcileInput): ReconciledMember {
  return {
    state: m.state,
    memberEpoch: m.memberEpoch,
    assigned: m.assigned,
    pendingRevocation: m.pendingRevocation,
  };
}

function stillOwnsAny(owned: Assignment | null, revoking: Assignment): boolean {
  if (owned === null) return partitionCount(revoking) > 0;
  for (const [topicId, ps] of revoking)
    for (const p of ps) if (hasPartition(owned, topicId, p)) return true;
  return false;
}

function nextAssignment(m: ReconcileInput): ReconciledMember {
  const kept = emptyAssignment();
  const revoking = emptyAssignment();
  for (const [topicId, ps] of m.assigned) {
    for (const p of ps) {
      if (hasPartition(m.target, topicId, p)) addPartition(kept, topicId, p);
      else addPartition(revoking, topicId, p);
    }
  }
  if (partitionCount(revoking) > 0 && stillOwnsAny(m.owned, revoking)) {
    return {
      state: 'UNREVOKED_PARTITIONS',
      memberEpoch: m.memberEpoch,
      assigned: kept,
      pendingRevocation: revoking,
    };
  }
  let unreleased = false;
  const assigned = kept;
  for (const [topicId, ps] of m.target) {
    for (const p of ps) {
      if (hasPartition(assigned, topicId, p)) continue;
      if (m.ownedByAnother(topicId, p)) unreleased = true;
      else addPartition(assigned, topicId, p);
    }
  }
  return {
    state: unreleased ? 'UNRELEASED_PARTITIONS' : 'STABLE',
    memberEpoch: m.targetEpoch,
    assigned,
    pendingRevocation: emptyAssignment(),
  };
}

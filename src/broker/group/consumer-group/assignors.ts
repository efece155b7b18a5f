/**
 * The server-side assignors of the consumer group protocol (KIP-848): `uniform`, the
 * default, and `range`, as Kafka's UniformAssignor and RangeAssignor define them. The
 * coordinator runs one whenever the group epoch moves past the assignment epoch; the
 * result is the group's target assignment, which members then reconcile towards
 * (reconciliation.ts).
 *
 * - uniform: every subscribed partition to exactly one subscriber, partition counts
 *   balanced (no member can take one from another and shrink the gap), sticky: a
 *   member keeps the partitions of its previous target while that keeps the balance.
 *   Heterogeneous subscriptions balance as far as the subscriptions allow.
 * - range: per topic, the topic's subscribers in member id order each get a
 *   contiguous range, the first `partitions % subscribers` one partition more, so
 *   co-partitioned topics line up member by member. Not sticky beyond what the
 *   ordering gives (Kafka's server-side range keeps more on membership changes).
 *
 * Racks are not considered (rack ids are kept and described, not used in placement).
 * Pure functions; deterministic for a given input.
 */
import { type Assignment, addPartition, emptyAssignment } from './assignment.ts';

export interface AssignorMember {
  memberId: string;
  /** Topic ids the member subscribes to that exist. */
  subscribedTopicIds: ReadonlySet<string>;
  /** The member's previous target assignment, for stickiness. */
  previous: Assignment;
}

export interface PartitionAssignor {
  readonly name: string;
  /** topics: topic id -> partition count. One entry per member in the result. */
  assign(
    members: readonly AssignorMember[],
    topics: ReadonlyMap<string, number>,
  ): Map<string, Assignment>;
}

function byMemberId(members: readonly AssignorMember[]): AssignorMember[] {
  return [...members].sort((a, b) =>
    a.memberId < b.memberId ? -1 : a.memberId > b.memberId ? 1 : 0,
  );
}

export const uniformAssignor: PartitionAssignor = {
  name: 'uniform',
  assign(members, topics) {
    const sorted = byMemberId(members);
    const result = new Map(sorted.map((m) => [m.memberId, emptyAssignment()]));
    const counts = new Map(sorted.map((m) => [m.memberId, 0]));
    const subscribers = new Map<string, AssignorMember[]>();
    for (const topicId of [...topics.keys()].sort()) {
      const subs = sorted.filter((m) => m.subscribedTopicIds.has(topicId));
      if (subs.length > 0) subscribers.set(topicId, subs);
    }
    let total = 0;
    for (const topicId of subscribers.keys()) total += topics.get(topicId)!;
    if (sorted.length === 0 || total === 0) return result;
    const quota = Math.ceil(total / sorted.length);
    const owner = new Map<string, string>();
    const key = (topicId: string, p: number) => `${topicId}:${p}`;
    const give = (memberId: string, topicId: string, p: number) => {
      addPartition(result.get(memberId)!, topicId, p);
      counts.set(memberId, counts.get(memberId)! + 1);
      owner.set(key(topicId, p), memberId);
    };
    // 1. Stickiness: previous partitions still subscribed and existing, up to the quota.
    for (const m of sorted) {
      for (const [topicId, ps] of m.previous) {
        const n = topics.get(topicId);
        if (n === undefined || !m.subscribedTopicIds.has(topicId)) continue;
        for (const p of [...ps].sort((x, y) => x - y)) {
          if (p >= n || owner.has(key(topicId, p)) || counts.get(m.memberId)! >= quota) continue;
          give(m.memberId, topicId, p);
        }
      }
    }
    // 2. The rest, each to its least loaded subscriber (member id breaks ties).
    for (const [topicId, subs] of subscribers) {
      for (let p = 0; p < topics.get(topicId)!; p++) {
        if (owner.has(key(topicId, p))) continue;
        const least = subs.reduce((a, b) =>
          counts.get(b.memberId)! < counts.get(a.memberId)! ? b : a,
        );
        give(least.memberId, topicId, p);
      }
    }
    // 3. Balance: move a partition while a subscriber of its topic has two fewer than its owner.
    let moved = true;
    while (moved) {
      moved = false;
      for (const [topicId, subs] of subscribers) {
        for (let p = 0; p < topics.get(topicId)!; p++) {
          const from = owner.get(key(topicId, p))!;
          const least = subs.reduce((a, b) =>
            counts.get(b.memberId)! < counts.get(a.memberId)! ? b : a,
          );
          if (counts.get(least.memberId)! + 1 >= counts.get(from)!) continue;
          result.get(from)!.get(topicId)!.delete(p);
          counts.set(from, counts.get(from)! - 1);
          give(least.memberId, topicId, p);
          moved = true;
        }
      }
    }
    return result;
  },
};

export const rangeAssignor: PartitionAssignor = {
  name: 'range',
  assign(members, topics) {
    const sorted = byMemberId(members);
    const result = new Map(sorted.map((m) => [m.memberId, emptyAssignment()]));
    for (const topicId of [...topics.keys()].sort()) {
      const subs = sorted.filter((m) => m.subscribedTopicIds.has(topicId));
      if (subs.length === 0) continue;
      const n = topics.get(topicId)!;
      const each = Math.floor(n / subs.length);
      const extra = n % subs.length;
      let next = 0;
      subs.forEach((m, i) => {
        const size = each + (i < extra ? 1 : 0);
        for (let p = next; p < next + size; p++) addPartition(result.get(m.memberId)!, topicId, p);
        next += size;
      });
    }
    return result;
  },
};

/** The assignors this broker serves, the default first (group.consumer.assignors). */
export const ASSIGNORS: readonly PartitionAssignor[] = [uniformAssignor, rangeAssignor];

export function assignorNamed(name: string): PartitionAssignor | undefined {
  return ASSIGNORS.find((a) => a.name === name);
}

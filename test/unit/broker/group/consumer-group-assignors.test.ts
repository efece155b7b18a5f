/**
 * The server-side assignors of KIP-848: every subscribed partition goes to exactly one
 * of its subscribers, `uniform` balances counts and keeps previous partitions, `range`
 * hands out contiguous ranges per topic in member id order.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Assignment,
  fromTopicPartitions,
  partitionCount,
  partitionsOf,
  toTopicPartitions,
} from '../../../../src/broker/group/consumer-group/assignment.ts';
import {
  type AssignorMember,
  rangeAssignor,
  uniformAssignor,
} from '../../../../src/broker/group/consumer-group/assignors.ts';

function member(
  memberId: string,
  topics: string[],
  previous: Assignment = new Map(),
): AssignorMember {
  return { memberId, subscribedTopicIds: new Set(topics), previous };
}

function owners(result: Map<string, Assignment>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [memberId, a] of result) {
    for (const [t, p] of partitionsOf(a))
      out.set(`${t}:${p}`, [...(out.get(`${t}:${p}`) ?? []), memberId]);
  }
  return out;
}

describe('the uniform assignor', () => {
  it('spreads the partitions of a shared subscription evenly', () => {
    const result = uniformAssignor.assign(
      [member('a', ['t']), member('b', ['t']), member('c', ['t'])],
      new Map([['t', 7]]),
    );
    const counts = [...result.values()].map(partitionCount).sort();
    expect(counts).toEqual([2, 2, 3]);
  });

  it("keeps a member's previous partitions when a member joins", () => {
    const previous = fromTopicPartitions([{ topicId: 't', partitions: [0, 1, 2, 3] }]);
    const result = uniformAssignor.assign(
      [member('a', ['t'], previous), member('b', ['t'])],
      new Map([['t', 4]]),
    );
    const kept = toTopicPartitions(result.get('a')!)[0]!.partitions;
    expect(kept).toHaveLength(2);
    expect(kept.every((p) => [0, 1, 2, 3].includes(p))).toBe(true);
    expect(partitionCount(result.get('b')!)).toBe(2);
  });

  it('gives a topic only to its subscribers', () => {
    const result = uniformAssignor.assign(
      [member('a', ['x']), member('b', ['x', 'y'])],
      new Map([
        ['x', 2],
        ['y', 2],
      ]),
    );
    expect(toTopicPartitions(result.get('a')!)).toEqual([{ topicId: 'x', partitions: [0, 1] }]);
    expect(toTopicPartitions(result.get('b')!)).toEqual([{ topicId: 'y', partitions: [0, 1] }]);
  });

  it('assigns every subscribed partition once, and no member can take one to narrow the gap', () => {
    const topicIds = ['t0', 't1', 't2'];
    fc.assert(
      fc.property(
        fc.array(fc.subarray(topicIds), { minLength: 1, maxLength: 6 }),
        fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 3, maxLength: 3 }),
        (subscriptions, sizes) => {
          const topics = new Map(topicIds.map((t, i) => [t, sizes[i]!]));
          const members = subscriptions.map((s, i) => member(`m${i}`, s));
          const result = uniformAssignor.assign(members, topics);
          const own = owners(result);
          for (const [t, n] of topics) {
            const subscribed = members.some((m) => m.subscribedTopicIds.has(t));
            for (let p = 0; p < n; p++)
              expect(own.get(`${t}:${p}`)?.length ?? 0).toBe(subscribed ? 1 : 0);
          }
          for (const [key, [holder]] of own) {
            const topic = key.split(':')[0]!;
            for (const m of members) {
              if (!m.subscribedTopicIds.has(topic)) continue;
              expect(partitionCount(result.get(m.memberId)!)).toBeGreaterThanOrEqual(
                partitionCount(result.get(holder!)!) - 1,
              );
            }
          }
        },
      ),
    );
  });
});

describe('the range assignor', () => {
  it('gives contiguous ranges in member id order, the first ones one more', () => {
    const result = rangeAssignor.assign(
      [member('b', ['t']), member('a', ['t']), member('c', ['t'])],
      new Map([['t', 5]]),
    );
    expect(toTopicPartitions(result.get('a')!)).toEqual([{ topicId: 't', partitions: [0, 1] }]);
    expect(toTopicPartitions(result.get('b')!)).toEqual([{ topicId: 't', partitions: [2, 3] }]);
    expect(toTopicPartitions(result.get('c')!)).toEqual([{ topicId: 't', partitions: [4] }]);
  });

  it('lines co-partitioned topics up member by member', () => {
    const result = rangeAssignor.assign(
      [member('a', ['x', 'y']), member('b', ['x', 'y'])],
      new Map([
        ['x', 4],
        ['y', 4],
      ]),
    );
    expect(toTopicPartitions(result.get('a')!)).toEqual([
      { topicId: 'x', partitions: [0, 1] },
      { topicId: 'y', partitions: [0, 1] },
    ]);
  });
});

/**
 * The records a consumer group (KIP-848) writes to __consumer_offsets: which ones each
 * change appends, in Kafka's order, and that what compaction leaves of them, in any
 * order, loads back into the same group.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TopicImage } from '../../../../src/broker/group/consumer-group/assignment.ts';
import type { ConsumerGroup } from '../../../../src/broker/group/consumer-group/consumer-group.ts';
import {
  ConsumerGroupCoordinator,
  type HeartbeatRequest,
} from '../../../../src/broker/group/consumer-group/consumer-group-coordinator.ts';
import {
  ConsumerGroupJournal,
  type JournalRecord,
} from '../../../../src/broker/group/consumer-group/consumer-group-journal.ts';
import { decodeConsumerGroupKey } from '../../../../src/broker/group/consumer-group/consumer-group-records.ts';
import { getLogger } from '../../../../src/util/logger.ts';
import { ManualTimers } from '../../../../src/util/timers.ts';
import { memberHeartbeat } from './coordinator-fixture.ts';

const T = '11111111-1111-1111-1111-111111111111';
const topics: TopicImage[] = [{ name: 't', topicId: T, partitions: 4 }];

function coordinator() {
  const timers = new ManualTimers();
  const batches: JournalRecord[][] = [];
  const groups = new ConsumerGroupCoordinator({
    clock: timers.clock,
    timers,
    logger: getLogger('test.group'),
    classicGroups: new Map(),
    store: {
      storeConsumerGroupRecords: async (_groupId, records) => {
        batches.push(records);
      },
    },
  });
  return { groups, batches, timers };
}

function hb(memberId: string, memberEpoch: number, owned: number[] | null = []): HeartbeatRequest {
  return memberHeartbeat(memberId, memberEpoch, owned, { topicId: T });
}

/** Each record as `kind` or `kind!` for a tombstone, with its member. */
function kinds(batch: JournalRecord[]): string[] {
  return batch.map((r) => {
    const key = decodeConsumerGroupKey(r.key)!;
    return `${key.kind}${r.value === null ? '!' : ''}${key.memberId ? `:${key.memberId}` : ''}`;
  });
}

/** Two members a and b sharing `t` with the range assignor, reconciled. */
function twoMembers() {
  const c = coordinator();
  const a1 = c.groups.heartbeat({ ...hb('a', 0, []), serverAssignor: 'range' }, topics);
  c.groups.heartbeat({ ...hb('b', 0, []), serverAssignor: 'range' }, topics);
  // a gives up two partitions, then b takes them.
  const a2 = c.groups.heartbeat(hb('a', a1.memberEpoch, [0, 1, 2, 3]), topics);
  const owned = a2.assignment![0]!.partitions;
  c.groups.heartbeat(hb('a', a2.memberEpoch, owned), topics);
  c.groups.heartbeat(hb('b', 2, []), topics);
  expect(c.groups.describe('g').state).toBe('Stable');
  return c;
}

describe('consumer group records', () => {
  it("a first heartbeat writes the member, the subscription, the epochs and the assignments, in a heartbeat's order", async () => {
    const { groups, batches } = coordinator();
    groups.heartbeat(hb('a', 0), topics);
    await groups.stored('g');
    expect(batches.map(kinds)).toEqual([
      [
        'memberMetadata:a',
        'partitionMetadata',
        'metadata',
        'targetAssignmentMember:a',
        'targetAssignmentMetadata',
        'currentMemberAssignment:a',
      ],
    ]);
  });

  it('a heartbeat that changes nothing writes nothing', async () => {
    const { groups, batches } = coordinator();
    const joined = groups.heartbeat(hb('a', 0), topics);
    groups.heartbeat(hb('a', joined.memberEpoch, [0, 1, 2, 3]), topics);
    await groups.stored('g');
    expect(batches).toHaveLength(1);
  });

  it("a member leaving tombstones its assignment, target and metadata before the group's new epoch; deleting the group tombstones the rest, its epoch last", async () => {
    const c = twoMembers();
    c.batches.length = 0;
    c.groups.heartbeat({ ...hb('b', 2, null), memberEpoch: -1 }, topics);
    c.groups.heartbeat({ ...hb('a', 2, null), memberEpoch: -1 }, topics);
    expect(c.groups.deleteIfEmpty('g')).toBe('NONE');
    await c.groups.stored('g');
    expect(c.batches.map(kinds)).toEqual([
      ['currentMemberAssignment!:b', 'targetAssignmentMember!:b', 'memberMetadata!:b', 'metadata'],
      ['currentMemberAssignment!:a', 'targetAssignmentMember!:a', 'memberMetadata!:a', 'metadata'],
      ['targetAssignmentMetadata!', 'partitionMetadata!', 'metadata!'],
    ]);
  });

  it('what compaction keeps of the records loads back into the same group, in whatever order', async () => {
    const c = twoMembers();
    await c.groups.stored('g');
    const byMember = (g: ReturnType<typeof c.groups.describe>) => ({
      ...g,
      members: [...g.members].sort((x, y) => (x.memberId < y.memberId ? -1 : 1)),
    });
    const described = byMember(c.groups.describe('g'));
    expect(described.assignorName).toBe('range');
    // Compaction keeps the last value of each key; a tombstone's key is gone.
    const latest = new Map<string, JournalRecord>();
    for (const r of c.batches.flat()) latest.set(r.key.toString('hex'), r);
    const survivors = [...latest.values()].filter((r) => r.value !== null);
    fc.assert(
      fc.property(fc.shuffledSubarray(survivors, { minLength: survivors.length }), (order) => {
        const loaded = coordinator();
        for (const r of order) expect(loaded.groups.replayRecord(r.key, r.value)).toBe('applied');
        loaded.groups.completeLoad();
        expect(byMember(loaded.groups.describe('g'))).toEqual(described);
        loaded.groups.close();
      }),
      { numRuns: 20 },
    );
  });

  it("after any sequence of heartbeats, what the log keeps is the group's whole encoding, though a heartbeat encodes only what changed", async () => {
    const command = fc.record({
      member: fc.constantFrom('a', 'b', 'c', 'd'),
      action: fc.constantFrom('beat', 'beat', 'beat', 'leave', 'rejoin'),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(command, { maxLength: 30 }), async (commands) => {
        const c = coordinator();
        const state = new Map<string, { epoch: number; owned: number[] }>();
        for (const { member, action } of commands) {
          const s = state.get(member);
          let req: HeartbeatRequest;
          if (!s || action === 'rejoin') req = hb(member, 0, []);
          else if (action === 'leave') req = { ...hb(member, s.epoch, null), memberEpoch: -1 };
          else req = hb(member, s.epoch, s.owned);
          const r = c.groups.heartbeat(req, topics);
          if (req.memberEpoch === -1 || r.error !== 'NONE') state.delete(member);
          else
            state.set(member, {
              epoch: r.memberEpoch,
              owned: r.assignment ? (r.assignment[0]?.partitions ?? []) : (s?.owned ?? []),
            });
          await c.groups.stored('g');
          const latest = new Map<string, string>();
          for (const rec of c.batches.flat()) {
            if (rec.value === null) latest.delete(rec.key.toString('hex'));
            else latest.set(rec.key.toString('hex'), rec.value.toString('hex'));
          }
          // The group as it is, encoded from scratch by a journal that has written nothing.
          const group = (c.groups as unknown as { groups: Map<string, ConsumerGroup> }).groups.get(
            'g',
          );
          const whole = new Map(
            new ConsumerGroupJournal()
              .changes('g', group)
              .map((rec) => [rec.key.toString('hex'), rec.value!.toString('hex')]),
          );
          expect(latest).toEqual(whole);
        }
        c.groups.close();
      }),
      { numRuns: 40 },
    );
  });
});

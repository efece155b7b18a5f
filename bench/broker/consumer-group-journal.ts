/**
 * The KIP-848 coordinator's journal (consumer-group-journal.ts) on a large group: how
 * many steady-state heartbeats (nothing changes, nothing is written) and how many
 * joining heartbeats (the target is recomputed) cost, for a group of `members` members
 * (default 1000) next to one of 10, four partitions a member, records kept in memory.
 * A steady heartbeat re-encodes only what changed, so its cost should barely grow with
 * the group: `steady heartbeat, N members / 10 members` is the ratio of the two.
 *
 * Run: LOG_LEVEL=warn node --import tsx bench/broker/consumer-group-journal.ts [members]
 * Prints `name: value unit` lines.
 */
import type { TopicImage } from '../../src/broker/group/consumer-group/assignment.ts';
import {
  ConsumerGroupCoordinator,
  type HeartbeatRequest,
} from '../../src/broker/group/consumer-group/consumer-group-coordinator.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { getLogger } from '../../src/util/logger.ts';
import type { Timers } from '../../src/util/timers.ts';

/** Timers that never fire: sessions do not expire during the run, and cost nothing. */
const idleTimers: Timers = { schedule: () => () => {} };

const members = Number(process.argv[2] ?? 1000);
const T = '11111111-1111-1111-1111-111111111111';
const PARTITIONS_PER_MEMBER = 4;

function line(name: string, value: number, unit: string): void {
  console.log(`${name}: ${value.toFixed(value >= 100 ? 0 : 2)} ${unit}`);
}

function hb(memberId: string, memberEpoch: number, owned: number[]): HeartbeatRequest {
  return {
    groupId: 'g',
    memberId,
    memberEpoch,
    instanceId: null,
    rackId: null,
    rebalanceTimeoutMs: memberEpoch === 0 ? 60_000 : -1,
    subscribedTopicNames: memberEpoch === 0 ? ['t'] : null,
    subscribedTopicRegex: null,
    serverAssignor: null,
    topicPartitions: memberEpoch === 0 ? [] : [{ topicId: T, partitions: owned }],
    clientId: 'c',
    clientHost: '/127.0.0.1',
  };
}

/** A group of n settled members: mean µs of a joining and of a steady heartbeat. */
function steadyMicros(n: number, beats: number): { steady: number; join: number } {
  const topics: TopicImage[] = [{ name: 't', topicId: T, partitions: PARTITIONS_PER_MEMBER * n }];
  let written = 0;
  const groups = new ConsumerGroupCoordinator({
    clock: new ManualClock(),
    timers: idleTimers,
    logger: getLogger('bench.group'),
    classicGroups: new Map(),
    store: {
      storeConsumerGroupRecords: async (_g, records) => {
        written += records.length;
      },
    },
  });
  const state = new Map<string, { epoch: number; owned: number[] }>();
  const beat = (id: string) => {
    const s = state.get(id) ?? { epoch: 0, owned: [] };
    const r = groups.heartbeat(hb(id, s.epoch, s.owned), topics);
    const owned = r.assignment ? (r.assignment[0]?.partitions ?? []) : s.owned;
    state.set(id, { epoch: r.memberEpoch, owned });
  };
  const ids = Array.from({ length: n }, (_, i) => `m${i}`);
  const joinStart = process.hrtime.bigint();
  for (const id of ids) beat(id);
  const join = Number(process.hrtime.bigint() - joinStart) / 1000 / n;
  for (let round = 0; round < 3; round++) for (const id of ids) beat(id);
  const before = written;
  const start = process.hrtime.bigint();
  for (let i = 0; i < beats; i++) beat(ids[i % n]!);
  const micros = Number(process.hrtime.bigint() - start) / 1000 / beats;
  if (written !== before) throw new Error('a steady heartbeat wrote records');
  groups.close();
  return { steady: micros, join };
}

const small = steadyMicros(10, 20_000);
const large = steadyMicros(members, 5_000);
line(`steady heartbeat, 10 members`, small.steady, 'µs');
line(`steady heartbeat, ${members} members`, large.steady, 'µs');
line(`steady heartbeat, ${members} members / 10 members`, large.steady / small.steady, 'x');
line(`joining heartbeat (target recomputed), ${members} members, mean`, large.join, 'µs');

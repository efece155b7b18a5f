import { describe, expect, it } from 'vitest';
import { joinFresh, joinRequest, setup } from './coordinator-fixture.ts';

describe('GroupCoordinator', () => {
  it('asks a new member to come back with an id, then makes it leader of generation 1', async () => {
    const { coordinator } = setup();
    const { memberId, joined } = await joinFresh(coordinator);
    const result = await joined;
    expect(result).toMatchObject({
      error: 'NONE',
      generationId: 1,
      leaderId: memberId,
      memberId,
      protocolName: 'range',
    });
    expect(result.members.map((m) => m.memberId)).toEqual([memberId]);
  });

  it('gives the member list to the leader only and relays the leader assignment to everyone', async () => {
    const { coordinator, timers } = setup(3000);
    const joins = await Promise.all([
      joinFresh(coordinator),
      joinFresh(coordinator),
      joinFresh(coordinator),
    ]);
    timers.advance(3000);
    const results = await Promise.all(joins.map((j) => j.joined));
    const leader = results.find((r) => r.memberId === r.leaderId)!;
    expect(new Set(results.map((r) => r.generationId))).toEqual(new Set([1]));
    expect(leader.members).toHaveLength(3);
    expect(results.filter((r) => r.members.length > 0)).toHaveLength(1);

    const followers = results.filter((r) => r !== leader);
    const followerSyncs = followers.map((f) =>
      coordinator.sync({
        groupId: 'g',
        memberId: f.memberId,
        generationId: 1,
        groupInstanceId: null,
        protocolType: 'consumer',
        protocolName: 'range',
        assignments: [],
      }),
    );
    const leaderSync = await coordinator.sync({
      groupId: 'g',
      memberId: leader.memberId,
      generationId: 1,
      groupInstanceId: null,
      protocolType: 'consumer',
      protocolName: 'range',
      assignments: results.map((r) => ({
        memberId: r.memberId,
        assignment: Buffer.from(r.memberId),
      })),
    });
    expect(leaderSync.assignment.toString()).toBe(leader.memberId);
    const synced = await Promise.all(followerSyncs);
    expect(synced.map((s) => s.assignment.toString())).toEqual(followers.map((f) => f.memberId));
    expect(coordinator.describeGroup('g').state).toBe('Stable');
  });

  it('waits for the initial rebalance delay so members joining together share one generation', async () => {
    const { coordinator, timers } = setup(3000);
    const a = await joinFresh(coordinator);
    timers.advance(2000);
    const b = await joinFresh(coordinator);
    timers.advance(2999);
    let settled = false;
    a.joined.then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    timers.advance(1);
    const [ra, rb] = await Promise.all([a.joined, b.joined]);
    expect(ra.generationId).toBe(1);
    expect(rb.generationId).toBe(1);
  });

  it('chooses a protocol every member supports, by preference votes', async () => {
    const { coordinator } = setup();
    const a = await joinFresh(coordinator, {
      protocols: [
        { name: 'roundrobin', metadata: Buffer.alloc(0) },
        { name: 'range', metadata: Buffer.alloc(0) },
      ],
    });
    expect((await a.joined).protocolName).toBe('roundrobin');
    const first = await coordinator.join(
      joinRequest({ protocols: [{ name: 'range', metadata: Buffer.alloc(0) }] }),
    );
    const b = coordinator.join(
      joinRequest({
        memberId: first.memberId,
        protocols: [{ name: 'range', metadata: Buffer.alloc(0) }],
      }),
    );
    const rejoinA = coordinator.join(
      joinRequest({
        memberId: (await a.joined).memberId,
        protocols: [
          { name: 'roundrobin', metadata: Buffer.alloc(0) },
          { name: 'range', metadata: Buffer.alloc(0) },
        ],
      }),
    );
    const [rb, ra] = await Promise.all([b, rejoinA]);
    expect(rb.protocolName).toBe('range');
    expect(ra.generationId).toBe(2);
  });

  it('refuses a member that shares no protocol with the group', async () => {
    const { coordinator } = setup();
    await (await joinFresh(coordinator)).joined;
    const result = await coordinator.join(
      joinRequest({ protocols: [{ name: 'RoundRobinAssigner', metadata: Buffer.alloc(0) }] }),
    );
    expect(result.error).toBe('INCONSISTENT_GROUP_PROTOCOL');
  });

  it('tells members to rejoin after one leaves, and forms the next generation without it', async () => {
    const { coordinator, timers } = setup();
    const a = await joinFresh(coordinator);
    const ra = await a.joined;
    const b = await joinFresh(coordinator);
    // a learns of the rebalance through its heartbeat and rejoins.
    expect(coordinator.heartbeat('g', ra.memberId, 1, null)).toBe('REBALANCE_IN_PROGRESS');
    const [ra2, rb] = await Promise.all([
      coordinator.join(joinRequest({ memberId: ra.memberId })),
      b.joined,
    ]);
    expect(ra2.generationId).toBe(2);
    expect(rb.generationId).toBe(2);
    await Promise.all([
      coordinator.sync({
        groupId: 'g',
        memberId: ra2.memberId,
        generationId: 2,
        groupInstanceId: null,
        protocolType: null,
        protocolName: null,
        assignments: [],
      }),
      coordinator.sync({
        groupId: 'g',
        memberId: rb.memberId,
        generationId: 2,
        groupInstanceId: null,
        protocolType: null,
        protocolName: null,
        assignments: [],
      }),
    ]);
    const left = coordinator.leave('g', [{ memberId: rb.memberId, groupInstanceId: null }]);
    expect(left.members[0]!.error).toBe('NONE');
    expect(coordinator.heartbeat('g', ra.memberId, 2, null)).toBe('REBALANCE_IN_PROGRESS');
    const ra3 = await coordinator.join(joinRequest({ memberId: ra.memberId }));
    expect(ra3).toMatchObject({ generationId: 3, leaderId: ra.memberId });
    expect(ra3.members).toHaveLength(1);
    expect(timers.pending).toBeGreaterThan(0);
  });

  it('removes a member whose session expires and rebalances the rest', async () => {
    const { coordinator, timers } = setup(3000);
    const a = await joinFresh(coordinator);
    const b = await joinFresh(coordinator);
    timers.advance(3000);
    const [ra, rb] = await Promise.all([a.joined, b.joined]);
    await Promise.all(
      [ra, rb].map((r) =>
        coordinator.sync({
          groupId: 'g',
          memberId: r.memberId,
          generationId: r.generationId,
          groupInstanceId: null,
          protocolType: null,
          protocolName: null,
          assignments: [],
        }),
      ),
    );
    // Only a keeps heartbeating.
    for (let t = 0; t < 12000; t += 3000) {
      timers.advance(3000);
      coordinator.heartbeat('g', ra.memberId, ra.generationId, null);
    }
    expect(coordinator.heartbeat('g', rb.memberId, rb.generationId, null)).toBe(
      'UNKNOWN_MEMBER_ID',
    );
    const next = await coordinator.join(joinRequest({ memberId: ra.memberId }));
    expect(next.members.map((m) => m.memberId)).toEqual([ra.memberId]);
  });

  it('drops members that do not rejoin within the rebalance timeout', async () => {
    const { coordinator, timers } = setup(3000);
    const a = await joinFresh(coordinator, { rebalanceTimeoutMs: 20000 });
    const b = await joinFresh(coordinator, { rebalanceTimeoutMs: 20000 });
    timers.advance(3000);
    const [ra, rb] = await Promise.all([a.joined, b.joined]);
    // A third member triggers a rebalance; b never rejoins (but its session is still alive).
    const c = await joinFresh(coordinator, { rebalanceTimeoutMs: 20000 });
    const rejoinA = coordinator.join(
      joinRequest({ memberId: ra.memberId, rebalanceTimeoutMs: 20000 }),
    );
    for (let t = 0; t < 20000; t += 2000) {
      timers.advance(2000);
      coordinator.heartbeat('g', rb.memberId, rb.generationId, null);
    }
    const [ra2, rc] = await Promise.all([rejoinA, c.joined]);
    expect(ra2.generationId).toBe(rc.generationId);
    const leader = [ra2, rc].find((r) => r.members.length > 0)!;
    expect(leader.members.map((m) => m.memberId).sort()).toEqual([ra.memberId, rc.memberId].sort());
    expect(coordinator.heartbeat('g', rb.memberId, rb.generationId, null)).toBe(
      'UNKNOWN_MEMBER_ID',
    );
  });

  it('answers stale generations with ILLEGAL_GENERATION and strangers with UNKNOWN_MEMBER_ID', async () => {
    const { coordinator } = setup();
    const r = await (await joinFresh(coordinator)).joined;
    expect(coordinator.heartbeat('g', r.memberId, r.generationId - 1, null)).toBe(
      'ILLEGAL_GENERATION',
    );
    expect(coordinator.heartbeat('g', 'nobody', r.generationId, null)).toBe('UNKNOWN_MEMBER_ID');
    const sync = await coordinator.sync({
      groupId: 'g',
      memberId: r.memberId,
      generationId: 99,
      groupInstanceId: null,
      protocolType: null,
      protocolName: null,
      assignments: [],
    });
    expect(sync.error).toBe('ILLEGAL_GENERATION');
  });

  it('gives a restarted static member its assignment back without a rebalance, fencing the old id', async () => {
    const { coordinator } = setup();
    const first = await coordinator.join(joinRequest({ groupInstanceId: 'worker-1' }));
    expect(first.error).toBe('NONE');
    await coordinator.sync({
      groupId: 'g',
      memberId: first.memberId,
      generationId: 1,
      groupInstanceId: 'worker-1',
      protocolType: null,
      protocolName: null,
      assignments: [{ memberId: first.memberId, assignment: Buffer.from('p0,p1') }],
    });
    const again = await coordinator.join(joinRequest({ groupInstanceId: 'worker-1' }));
    expect(again.error).toBe('NONE');
    expect(again.generationId).toBe(1);
    expect(again.memberId).not.toBe(first.memberId);
    // The leader came back unchanged (KIP-814): it gets the members, and skips assigning.
    expect(again.leaderId).toBe(again.memberId);
    expect(again.skipAssignment).toBe(true);
    expect(again.members.map((m) => m.memberId)).toEqual([again.memberId]);
    const sync = await coordinator.sync({
      groupId: 'g',
      memberId: again.memberId,
      generationId: 1,
      groupInstanceId: 'worker-1',
      protocolType: null,
      protocolName: null,
      assignments: [],
    });
    expect(sync.assignment.toString()).toBe('p0,p1');
    expect(coordinator.heartbeat('g', first.memberId, 1, 'worker-1')).toBe('FENCED_INSTANCE_ID');
    expect(coordinator.describeGroup('g').state).toBe('Stable');
  });

  it('keeps committed offsets per partition and answers -1 for partitions never committed', async () => {
    const { coordinator } = setup();
    const r = await (await joinFresh(coordinator)).joined;
    await coordinator.sync({
      groupId: 'g',
      memberId: r.memberId,
      generationId: 1,
      groupInstanceId: null,
      protocolType: null,
      protocolName: null,
      assignments: [],
    });
    const errors = await coordinator.commitOffsets({
      groupId: 'g',
      generationId: 1,
      memberId: r.memberId,
      groupInstanceId: null,
      offsets: [{ topic: 't', partition: 0, offset: 42, leaderEpoch: -1, metadata: 'm' }],
    });
    expect(errors).toEqual(['NONE']);
    const fetched = coordinator.fetchOffsets('g', [
      { topic: 't', partition: 0 },
      { topic: 't', partition: 1 },
    ]);
    expect(fetched.map((o) => o.offset)).toEqual([42, -1]);
    const stale = await coordinator.commitOffsets({
      groupId: 'g',
      generationId: 0,
      memberId: r.memberId,
      groupInstanceId: null,
      offsets: [{ topic: 't', partition: 0, offset: 50, leaderEpoch: -1, metadata: null }],
    });
    expect(stale).toEqual(['ILLEGAL_GENERATION']);
  });

  it('accepts simple commits with generation -1 and expires offsets of groups empty past retention', async () => {
    const { coordinator, timers } = setup();
    await coordinator.commitOffsets({
      groupId: 'simple',
      generationId: -1,
      memberId: '',
      groupInstanceId: null,
      offsets: [{ topic: 't', partition: 3, offset: 7, leaderEpoch: -1, metadata: null }],
    });
    expect(coordinator.fetchOffsets('simple', null).map((o) => o.offset)).toEqual([7]);
    timers.advance(7 * 24 * 3600 * 1000 - 1);
    expect(await coordinator.expireOffsets()).toBe(0);
    timers.advance(1);
    expect(await coordinator.expireOffsets()).toBe(1);
    expect(coordinator.fetchOffsets('simple', null)).toEqual([]);
  });

  it('removes a leader that never sends the assignment, so waiting followers can move on', async () => {
    const { coordinator, timers } = setup(3000);
    const a = await joinFresh(coordinator, { rebalanceTimeoutMs: 20000 });
    const b = await joinFresh(coordinator, { rebalanceTimeoutMs: 20000 });
    timers.advance(3000);
    const [ra, rb] = await Promise.all([a.joined, b.joined]);
    const leader = ra.memberId === ra.leaderId ? ra : rb;
    const follower = leader === ra ? rb : ra;
    const waiting = coordinator.sync({
      groupId: 'g',
      memberId: follower.memberId,
      generationId: 1,
      groupInstanceId: null,
      protocolType: null,
      protocolName: null,
      assignments: [],
    });
    // The leader keeps heartbeating but never syncs.
    for (let t = 0; t < 20000; t += 2000) {
      timers.advance(2000);
      coordinator.heartbeat('g', leader.memberId, 1, null);
    }
    expect((await waiting).error).toBe('REBALANCE_IN_PROGRESS');
    expect(coordinator.heartbeat('g', leader.memberId, 1, null)).toBe('UNKNOWN_MEMBER_ID');
    const next = await coordinator.join(
      joinRequest({ memberId: follower.memberId, rebalanceTimeoutMs: 20000 }),
    );
    expect(next, JSON.stringify(next)).toMatchObject({ error: 'NONE' });
    expect(next.members.map((m) => m.memberId)).toEqual([follower.memberId]);
  });
});

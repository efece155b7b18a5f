/**
 * KIP-345 fencing: once a new member takes over a group.instance.id, every request of
 * the member it replaced that names that instance id is answered FENCED_INSTANCE_ID
 * (which clients treat as fatal) rather than UNKNOWN_MEMBER_ID (which makes them
 * rejoin and steal the instance back). The same holds for any protocol type.
 */
import { describe, expect, it } from 'vitest';
import type { ProtocolMetadata } from '../../../../src/broker/group/group.ts';
import type {
  GroupCoordinator,
  SyncRequest,
} from '../../../../src/broker/group/group-coordinator.ts';
import { joinRequest, setup } from './coordinator-fixture.ts';

const INSTANCE = 'instance-x';

const protocolTypes: Array<{ protocolType: string; protocols: ProtocolMetadata[] }> = [
  { protocolType: 'consumer', protocols: [{ name: 'range', metadata: Buffer.from('topics') }] },
  {
    protocolType: 'connect',
    protocols: [
      { name: 'sessioned', metadata: Buffer.from('worker') },
      { name: 'compatible', metadata: Buffer.from('worker') },
    ],
  },
];

function syncRequest(memberId: string, over: Partial<SyncRequest> = {}): SyncRequest {
  return {
    groupId: 'g',
    memberId,
    generationId: 1,
    groupInstanceId: INSTANCE,
    protocolType: null,
    protocolName: null,
    assignments: [],
    ...over,
  };
}

function commit(
  coordinator: GroupCoordinator,
  memberId: string,
  groupInstanceId: string | null,
  offset: number,
) {
  return coordinator.commitOffsets({
    groupId: 'g',
    generationId: 1,
    memberId,
    groupInstanceId,
    offsets: [
      { topic: 't', partition: 0, offset, leaderEpoch: -1, metadata: null },
      { topic: 't', partition: 1, offset, leaderEpoch: -1, metadata: null },
    ],
  });
}

describe.each(protocolTypes)('a replaced static member of a $protocolType group', (protocol) => {
  /** Member `old` holds INSTANCE in a Stable generation 1, then `current` restarts into it. */
  async function replacedStaticMember() {
    const { coordinator } = setup();
    const join = () => coordinator.join(joinRequest({ groupInstanceId: INSTANCE, ...protocol }));
    const old = await join();
    expect(old.error).toBe('NONE');
    await coordinator.sync(
      syncRequest(old.memberId, {
        assignments: [{ memberId: old.memberId, assignment: Buffer.from('p0,p1') }],
      }),
    );
    const current = await join();
    expect(current.error).toBe('NONE');
    expect((await coordinator.sync(syncRequest(current.memberId))).error).toBe('NONE');
    return { coordinator, old: old.memberId, current: current.memberId };
  }

  /** The group as a user sees it: still Stable, with the instance held by `current`. */
  function expectHeldBy(coordinator: GroupCoordinator, current: string) {
    const group = coordinator.describeGroup('g');
    expect(group.state).toBe('Stable');
    expect(group.members.map((m) => [m.memberId, m.groupInstanceId])).toEqual([
      [current, INSTANCE],
    ]);
  }

  it('gets FENCED_INSTANCE_ID for its next Heartbeat', async () => {
    const { coordinator, old, current } = await replacedStaticMember();
    expect(coordinator.heartbeat('g', old, 1, INSTANCE)).toBe('FENCED_INSTANCE_ID');
    expectHeldBy(coordinator, current);
  });

  it('gets FENCED_INSTANCE_ID for SyncGroup', async () => {
    const { coordinator, old, current } = await replacedStaticMember();
    const sync = await coordinator.sync(syncRequest(old));
    expect(sync.error).toBe('FENCED_INSTANCE_ID');
    expect(sync.assignment).toHaveLength(0);
    expectHeldBy(coordinator, current);
  });

  it('gets FENCED_INSTANCE_ID for every partition of an OffsetCommit, which stores nothing', async () => {
    const { coordinator, old, current } = await replacedStaticMember();
    expect(await commit(coordinator, old, INSTANCE, 42)).toEqual([
      'FENCED_INSTANCE_ID',
      'FENCED_INSTANCE_ID',
    ]);
    expect(coordinator.fetchOffsets('g', null)).toEqual([]);
    expectHeldBy(coordinator, current);
  });

  it('gets FENCED_INSTANCE_ID for LeaveGroup, and the new holder stays in the group', async () => {
    const { coordinator, old, current } = await replacedStaticMember();
    const left = coordinator.leave('g', [{ memberId: old, groupInstanceId: INSTANCE }]);
    expect(left.error).toBe('NONE');
    expect(left.members).toEqual([
      { memberId: old, groupInstanceId: INSTANCE, error: 'FENCED_INSTANCE_ID' },
    ]);
    expectHeldBy(coordinator, current);
  });

  it('gets FENCED_INSTANCE_ID when it rejoins with its old member id', async () => {
    const { coordinator, old, current } = await replacedStaticMember();
    const rejoin = await coordinator.join(
      joinRequest({ memberId: old, groupInstanceId: INSTANCE, ...protocol }),
    );
    expect(rejoin).toMatchObject({ error: 'FENCED_INSTANCE_ID', memberId: old });
    expectHeldBy(coordinator, current);
  });

  it('leaves the new holder free to heartbeat, sync, commit and leave under the instance id', async () => {
    const { coordinator, current } = await replacedStaticMember();
    expect(coordinator.heartbeat('g', current, 1, INSTANCE)).toBe('NONE');
    const sync = await coordinator.sync(syncRequest(current));
    expect(sync).toMatchObject({ error: 'NONE', protocolType: protocol.protocolType });
    expect(sync.assignment.toString()).toBe('p0,p1');
    expect(await commit(coordinator, current, INSTANCE, 7)).toEqual(['NONE', 'NONE']);
    const left = coordinator.leave('g', [{ memberId: current, groupInstanceId: INSTANCE }]);
    expect(left.members[0]!.error).toBe('NONE');
    expect(coordinator.describeGroup('g').members).toEqual([]);
  });

  it('answers a member id it does not know, sent without an instance id, with UNKNOWN_MEMBER_ID', async () => {
    const { coordinator, current } = await replacedStaticMember();
    const stranger = 'stranger-1';
    expect(coordinator.heartbeat('g', stranger, 1, null)).toBe('UNKNOWN_MEMBER_ID');
    expect((await coordinator.sync(syncRequest(stranger, { groupInstanceId: null }))).error).toBe(
      'UNKNOWN_MEMBER_ID',
    );
    expect(await commit(coordinator, stranger, null, 1)).toEqual([
      'UNKNOWN_MEMBER_ID',
      'UNKNOWN_MEMBER_ID',
    ]);
    expect(
      coordinator.leave('g', [{ memberId: stranger, groupInstanceId: null }]).members[0]!.error,
    ).toBe('UNKNOWN_MEMBER_ID');
    expect((await coordinator.join(joinRequest({ memberId: stranger, ...protocol }))).error).toBe(
      'UNKNOWN_MEMBER_ID',
    );
    expectHeldBy(coordinator, current);
  });
});

import { describe, expect, it } from 'vitest';
import {
  decodeAssignment,
  emptyAssignment,
  encodeMetadata,
} from '../../../../src/connect/herder/connect-protocol.ts';
import {
  decodeMembers,
  groupAssignment,
  maxConfigOffset,
} from '../../../../src/connect/herder/group-assignment.ts';
import { initialAssignorState } from '../../../../src/connect/herder/incremental-cooperative-assignor.ts';

const connectors = new Map([['src', 2]]);

function member(id: string, version: number, configOffset: number, tasks: number[] = []) {
  const allocation =
    tasks.length === 0
      ? null
      : { ...emptyAssignment(version), tasks: tasks.map((task) => ({ connector: 'src', task })) };
  return {
    memberId: id,
    metadata: encodeMetadata({ version, url: `http://${id}:8083`, configOffset, allocation }),
  };
}

const common = {
  leaderId: 'a',
  leaderUrl: 'http://fallback',
  generation: 4,
  lastCompletedGeneration: 3,
  now: 0,
  maxDelayMs: 1000,
  state: initialAssignorState(),
};

describe('group assignment (leader step)', () => {
  it('answers CONFIG_MISMATCH to everyone while the leader is behind a member', () => {
    const members = decodeMembers([member('a', 1, 5), member('b', 1, 9)]);
    expect(maxConfigOffset(members)).toBe(9);
    const result = groupAssignment({
      ...common,
      members,
      version: 1,
      snapshot: { configOffset: 5, connectors },
    });
    expect(result.configMismatch).toBe(true);
    expect(result.state).toBe(common.state);
    for (const { assignment } of result.assignments) {
      const a = decodeAssignment(assignment);
      expect(a).toMatchObject({
        error: 1,
        leader: 'a',
        leaderUrl: 'http://a:8083',
        configOffset: 5,
      });
      expect(a.tasks).toEqual([]);
    }
  });

  it('under the eager protocol gives complete v0 assignments whatever members claim to run', () => {
    const members = decodeMembers([member('a', 0, 1), member('b', 0, 1)]);
    const result = groupAssignment({
      ...common,
      members,
      version: 0,
      snapshot: { configOffset: 1, connectors },
    });
    const decoded = result.assignments.map((x) => decodeAssignment(x.assignment));
    expect(decoded.map((a) => a.version)).toEqual([0, 0]);
    expect(decoded.flatMap((a) => a.tasks).length).toBe(2);
    expect(decoded.flatMap((a) => a.connectors)).toEqual(['src']);
    expect(result.delay).toBe(0);
  });

  it('encodes incremental revocations at the chosen version', () => {
    // b runs both tasks and the connector is nowhere: a new member a takes the connector and one task moves.
    const members = decodeMembers([member('a', 2, 1), member('b', 2, 1, [0, 1])]);
    const result = groupAssignment({
      ...common,
      members,
      version: 2,
      snapshot: { configOffset: 1, connectors },
    });
    const byId = new Map(
      result.assignments.map((x) => [x.memberId, decodeAssignment(x.assignment)]),
    );
    expect(byId.get('a')!.version).toBe(2);
    expect(byId.get('b')!.revokedTasks).toEqual([{ connector: 'src', task: 1 }]);
    expect(byId.get('a')!.tasks).toEqual([]);
  });
});

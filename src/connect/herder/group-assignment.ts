/**
 * The leader's step of a `connect` rebalance, from the members' JoinGroup metadata
 * to the SyncGroup assignment bytes, as a pure function (Kafka Connect's
 * IncrementalCooperativeAssignor.performAssignment around the algorithm):
 *
 *   - If the leader's config snapshot is behind the highest config offset any
 *     member has read, nobody gets work: every member gets an assignment with error
 *     CONFIG_MISMATCH, reads the config topic and rejoins.
 *   - Otherwise the incremental cooperative assignor decides, and each member gets
 *     what it starts, what it stops, and the delay until the follow-up rebalance.
 *   - Under the eager protocol ("default", v0) members have given up all their work
 *     before joining, so the assignor sees them empty, keeps no delay, and each
 *     assignment is complete.
 *
 * Called by worker-group-member.ts when it is the leader; no I/O.
 */
import {
  ASSIGNMENT_CONFIG_MISMATCH,
  ASSIGNMENT_NO_ERROR,
  CONNECT_PROTOCOL_V0,
  decodeMetadata,
  encodeAssignment,
  type WorkerMetadata,
} from './connect-protocol.ts';
import {
  type AssignorInput,
  type AssignorState,
  assignIncrementally,
} from './incremental-cooperative-assignor.ts';

export interface LeaderSnapshot {
  configOffset: number;
  /** Connector name -> number of committed task configs. */
  connectors: ReadonlyMap<string, number>;
}

export interface DecodedMember {
  memberId: string;
  metadata: WorkerMetadata;
}

export function decodeMembers(
  members: ReadonlyArray<{ memberId: string; metadata: Buffer }>,
): DecodedMember[] {
  return members.map((m) => ({ memberId: m.memberId, metadata: decodeMetadata(m.metadata) }));
}

/** The config offset the leader must have read before it may assign. */
export function maxConfigOffset(members: readonly DecodedMember[]): number {
  return Math.max(-1, ...members.map((m) => m.metadata.configOffset));
}

/** The leader's view of the group, plus the assignor's own inputs (see AssignorInput). */
export interface GroupAssignmentInput
  extends Pick<
    AssignorInput,
    'generation' | 'lastCompletedGeneration' | 'now' | 'maxDelayMs' | 'state' | 'released'
  > {
  members: readonly DecodedMember[];
  leaderId: string;
  /** The leader's own URL, used if its metadata is missing from the list. */
  leaderUrl: string;
  /** Connect protocol version of the protocol the group chose. */
  version: number;
  snapshot: LeaderSnapshot;
}

export interface GroupAssignment {
  assignments: Array<{ memberId: string; assignment: Buffer }>;
  /** The assignor state to keep (unchanged on a config mismatch). */
  state: AssignorState;
  configMismatch: boolean;
  delay: number;
}

export function groupAssignment(input: GroupAssignmentInput): GroupAssignment {
  const { members, snapshot, version } = input;
  const base = {
    version,
    leader: input.leaderId,
    leaderUrl: members.find((m) => m.memberId === input.leaderId)?.metadata.url ?? input.leaderUrl,
    configOffset: snapshot.configOffset,
    delay: 0,
  };
  const nothing = { connectors: [], tasks: [], revokedConnectors: [], revokedTasks: [] };
  if (snapshot.configOffset < maxConfigOffset(members)) {
    return {
      assignments: members.map((m) => ({
        memberId: m.memberId,
        assignment: encodeAssignment({ ...base, ...nothing, error: ASSIGNMENT_CONFIG_MISMATCH }),
      })),
      state: input.state,
      configMismatch: true,
      delay: 0,
    };
  }
  const eager = version === CONNECT_PROTOCOL_V0;
  const result = assignIncrementally({
    members: members.map((m) => ({
      memberId: m.memberId,
      url: m.metadata.url,
      running:
        eager || m.metadata.allocation === null
          ? { connectors: [], tasks: [] }
          : { connectors: m.metadata.allocation.connectors, tasks: m.metadata.allocation.tasks },
    })),
    configured: snapshot.connectors,
    generation: input.generation,
    lastCompletedGeneration: eager ? -1 : input.lastCompletedGeneration,
    now: input.now,
    maxDelayMs: eager ? 0 : input.maxDelayMs,
    state: input.state,
    released: input.released,
  });
  return {
    assignments: members.map((m) => {
      const a = result.assignments.get(m.memberId)!;
      return {
        memberId: m.memberId,
        assignment: encodeAssignment({
          ...base,
          error: ASSIGNMENT_NO_ERROR,
          connectors: a.assigned.connectors,
          tasks: a.assigned.tasks,
          revokedConnectors: a.revoked.connectors,
          revokedTasks: a.revoked.tasks,
          delay: result.delay,
        }),
      };
    }),
    state: result.state,
    configMismatch: false,
    delay: result.delay,
  };
}

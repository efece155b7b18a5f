/**
 * The leader's assignment of connectors and tasks to the members of the `connect`
 * group, after Kafka's KIP-415 (incremental cooperative rebalancing), as a pure
 * function: (members and what each runs now, the configured connectors with their
 * task counts, the time, the state kept from the previous round) -> (what each
 * member starts, what it stops, the delay before a follow-up rebalance, the next
 * state).
 *
 * Rules, in the order they apply:
 *   1. What a member runs stays where it is unless it must move. Work of deleted
 *      connectors is revoked; work running on two members (after a network split)
 *      stays on one and is revoked from the others.
 *   2. Work that was assigned last round and is now running nowhere is "lost". It
 *      is reassigned at once when its owner is still in the group (it failed to
 *      take the assignment up), when the caller says it was released (its owner
 *      stopped it and left cleanly: `released`), or when delays are off. Work
 *      whose owner comes back (a member with the owner's URL under a new member id:
 *      the worker restarted) is given back to it at once.
 *   3. Other lost work is held for `maxDelayMs` (scheduled.rebalance.max.delay.ms)
 *      from the first round that saw it missing; members are told the remaining
 *      delay so they rejoin when it ends, and the held work is then spread over
 *      whoever is there. While work is held nothing is revoked for balance, so a
 *      returning worker finds room.
 *   4. With nothing held, members above their fair share lose the excess: with T
 *      items over W members each keeps at most ceil or floor of T/W (connectors and
 *      tasks counted separately), the busiest keeping the extras. Revoked work is
 *      not reassigned in the same round (the member must stop it first); the
 *      member rejoins after revoking and the follow-up round places it.
 *   5. New and reassignable work goes to the least loaded member, one item at a
 *      time, so counts end within one of each other.
 *
 * Invariant: in one generation an item is newly assigned only if no member of that
 * generation reports running it and none keeps it; so no task runs on two members
 * of the same generation. Work of a vanished member may still run on that member
 * until its session times out: worker-group-member.ts makes such a member stop its
 * work when it cannot heartbeat for the session timeout, and the delay here (held
 * work) is what keeps the others from starting it sooner.
 *
 * The state belongs to the leader. A new leader starts from the initial state and
 * then knows only what members report: work of members that vanished before it took
 * over counts as new and is assigned at once (as in Kafka Connect).
 *
 * Called by the leader's group member (worker-group-member.ts) during SyncGroup;
 * no I/O, no clock of its own (`now` is given).
 */
import type { ConnectorTaskId } from './herder.ts';

/** Connectors and tasks, as members report them and assignments carry them. */
export interface WorkLoad {
  connectors: string[];
  tasks: ConnectorTaskId[];
}

export interface AssignorMember {
  memberId: string;
  /** The worker's REST URL: stable across restarts, unlike the member id. */
  url: string;
  /** What the member runs now (its current allocation from its metadata). */
  running: WorkLoad;
}

/** Who was given an item, and in which generation. */
export interface Owner {
  memberId: string;
  url: string;
  generation: number;
}

export interface AssignorState {
  /** Generation this state was computed for; -1 before the first round. */
  readonly generation: number;
  /** Item key -> its owner after the last round (revoked items excluded). */
  readonly owners: ReadonlyMap<string, Owner>;
  /** Lost items waiting for their owner to come back, with that owner. */
  readonly held: ReadonlyMap<string, Owner>;
  /** When held work is to be redistributed (ms since epoch); 0: nothing scheduled. */
  readonly scheduledRebalanceAt: number;
}

export interface AssignorInput {
  members: readonly AssignorMember[];
  /** Configured connectors and how many committed task configs each has. */
  configured: ReadonlyMap<string, number>;
  generation: number;
  /** The last generation whose SyncGroup this leader completed; -1 if none. */
  lastCompletedGeneration: number;
  now: number;
  /** scheduled.rebalance.max.delay.ms; 0 reassigns lost work at once. */
  maxDelayMs: number;
  state: AssignorState;
  /**
   * True when a lost item is known to be stopped by its previous owner (for
   * instance its status record says UNASSIGNED, written by that worker after it was
   * given the item), so it can move at once instead of waiting for the delay.
   */
  released?: (item: WorkItem, owner: Owner) => boolean;
}

export type WorkItem =
  | { connector: string; task?: undefined }
  | { connector: string; task: number };

export interface MemberAssignment {
  /** Newly assigned in this round (not including what the member keeps). */
  assigned: WorkLoad;
  revoked: WorkLoad;
}

export interface AssignorResult {
  assignments: Map<string, MemberAssignment>;
  /** ms until the follow-up rebalance that redistributes held work; 0: none. */
  delay: number;
  state: AssignorState;
}

export function initialAssignorState(): AssignorState {
  return { generation: -1, owners: new Map(), held: new Map(), scheduledRebalanceAt: 0 };
}

// Item keys: a connector is "c:<name>", a task "t:<n>:<name>" (the number first, so
// names may contain any character).
export function connectorKey(name: string): string {
  return `c:${name}`;
}
export function taskKey(id: ConnectorTaskId): string {
  return `t:${id.task}:${id.connector}`;
}
export function itemOfKey(key: string): WorkItem {
  if (key.startsWith('c:')) return { connector: key.slice(2) };
  const colon = key.indexOf(':', 2);
  return { connector: key.slice(colon + 1), task: Number(key.slice(2, colon)) };
}
function isTaskKey(key: string): boolean {
  return key.startsWith('t:');
}

function keysOf(load: WorkLoad): string[] {
  return [...load.connectors.map(connectorKey), ...load.tasks.map(taskKey)];
}

function loadOf(keys: Iterable<string>): WorkLoad {
  const sorted = [...keys].sort(compareKeys);
  const load: WorkLoad = { connectors: [], tasks: [] };
  for (const k of sorted) {
    const item = itemOfKey(k);
    if (item.task === undefined) load.connectors.push(item.connector);
    else load.tasks.push({ connector: item.connector, task: item.task });
  }
  return load;
}

/** Connector name, then task number: a stable order for deterministic results. */
function compareKeys(a: string, b: string): number {
  const x = itemOfKey(a);
  const y = itemOfKey(b);
  if (x.connector !== y.connector) return x.connector < y.connector ? -1 : 1;
  return (x.task ?? -1) - (y.task ?? -1);
}

export function assignIncrementally(input: AssignorInput): AssignorResult {
  const { members, configured, now, generation } = input;
  // A state from another generation than the last completed one may describe an
  // assignment the members never received: trust only what they report.
  const fresh = input.state.generation === input.lastCompletedGeneration;
  const previousOwners = fresh ? input.state.owners : new Map<string, Owner>();

  const wanted = new Set<string>();
  for (const name of [...configured.keys()].sort()) {
    wanted.add(connectorKey(name));
    const count = configured.get(name)!;
    for (let t = 0; t < count; t++) wanted.add(taskKey({ connector: name, task: t }));
  }

  const byId = new Map(members.map((m) => [m.memberId, m]));
  const memberIds = [...byId.keys()].sort();
  const next = new Map<string, Set<string>>(memberIds.map((id) => [id, new Set<string>()]));
  const revoked = new Map<string, Set<string>>(memberIds.map((id) => [id, new Set<string>()]));
  const assigned = new Map<string, Set<string>>(memberIds.map((id) => [id, new Set<string>()]));

  // Rule 1: keep what runs, minus deleted work and duplicates.
  const runningOn = new Map<string, string[]>();
  for (const id of memberIds) {
    for (const key of keysOf(byId.get(id)!.running)) {
      if (!wanted.has(key)) {
        revoked.get(id)!.add(key);
        continue;
      }
      const list = runningOn.get(key) ?? [];
      list.push(id);
      runningOn.set(key, list);
    }
  }
  for (const [key, ids] of runningOn) {
    const expected = previousOwners.get(key)?.memberId;
    const keeper = ids.includes(expected ?? '') ? expected! : ids[0]!;
    next.get(keeper)!.add(key);
    for (const id of ids) if (id !== keeper) revoked.get(id)!.add(key);
  }

  // Rules 2 and 3: lost work.
  const lost = new Map<string, Owner>();
  for (const source of [fresh ? previousOwners : new Map<string, Owner>(), input.state.held]) {
    for (const [key, owner] of source) {
      if (wanted.has(key) && !runningOn.has(key) && !lost.has(key)) lost.set(key, owner);
    }
  }
  const byUrl = new Map<string, string>();
  for (const id of memberIds) if (!byUrl.has(byId.get(id)!.url)) byUrl.set(byId.get(id)!.url, id);
  const held = new Map<string, Owner>();
  for (const [key, owner] of [...lost].sort(([a], [b]) => compareKeys(a, b))) {
    // Still in the group, or delays are off: placed below like new work.
    if (byId.has(owner.memberId) || input.maxDelayMs <= 0) continue;
    const returned = byUrl.get(owner.url);
    if (returned !== undefined) {
      next.get(returned)!.add(key);
      assigned.get(returned)!.add(key);
      continue;
    }
    if (!input.released?.(itemOfKey(key), owner)) held.set(key, owner);
  }
  let scheduledRebalanceAt = 0;
  let delay = 0;
  if (held.size > 0) {
    scheduledRebalanceAt =
      input.state.scheduledRebalanceAt > 0
        ? input.state.scheduledRebalanceAt
        : now + input.maxDelayMs;
    if (now >= scheduledRebalanceAt) {
      // The owners did not come back in time: everything held is placed below.
      held.clear();
      scheduledRebalanceAt = 0;
    } else {
      delay = scheduledRebalanceAt - now;
    }
  }

  // Rule 4: revocations for balance, only with nothing held.
  if (held.size === 0 && memberIds.length > 0) {
    const totalConnectors = [...wanted].filter((k) => !isTaskKey(k)).length;
    const totalTasks = wanted.size - totalConnectors;
    revokeExcess(memberIds, next, revoked, totalConnectors, (k) => !isTaskKey(k));
    revokeExcess(memberIds, next, revoked, totalTasks, isTaskKey);
  }

  // Rule 5: place new and reassignable work on the least loaded members.
  const placed = new Set<string>();
  for (const keys of next.values()) for (const k of keys) placed.add(k);
  const balanceRevoked = new Set<string>();
  for (const [id, keys] of revoked) {
    for (const k of keys) if (wanted.has(k) && !next.get(id)!.has(k)) balanceRevoked.add(k);
  }
  const toPlace = [...wanted]
    .filter((k) => !placed.has(k) && !held.has(k) && !balanceRevoked.has(k))
    .sort(compareKeys);
  if (memberIds.length > 0) {
    for (const key of toPlace) {
      const task = isTaskKey(key);
      let best = memberIds[0]!;
      let bestCount = Number.POSITIVE_INFINITY;
      for (const id of memberIds) {
        const count = countOf(next.get(id)!, task);
        if (count < bestCount) {
          best = id;
          bestCount = count;
        }
      }
      next.get(best)!.add(key);
      assigned.get(best)!.add(key);
    }
  }

  const owners = new Map<string, Owner>();
  for (const id of memberIds) {
    for (const key of next.get(id)!) {
      const before = previousOwners.get(key);
      owners.set(
        key,
        before?.memberId === id && !assigned.get(id)!.has(key)
          ? before
          : { memberId: id, url: byId.get(id)!.url, generation },
      );
    }
  }
  const assignments = new Map<string, MemberAssignment>();
  for (const id of memberIds) {
    assignments.set(id, { assigned: loadOf(assigned.get(id)!), revoked: loadOf(revoked.get(id)!) });
  }
  return { assignments, delay, state: { generation, owners, held, scheduledRebalanceAt } };
}

function countOf(keys: Set<string>, tasks: boolean): number {
  let n = 0;
  for (const k of keys) if (isTaskKey(k) === tasks) n++;
  return n;
}

/**
 * Caps each member at floor(total / members), the `total % members` busiest at one
 * more, and revokes the excess (the highest keys, so results are deterministic).
 */
function revokeExcess(
  memberIds: string[],
  next: Map<string, Set<string>>,
  revoked: Map<string, Set<string>>,
  total: number,
  counts: (key: string) => boolean,
): void {
  const min = Math.floor(total / memberIds.length);
  let extras = total % memberIds.length;
  const ranked = memberIds
    .map((id) => ({ id, keys: [...next.get(id)!].filter(counts).sort(compareKeys) }))
    .sort((a, b) => b.keys.length - a.keys.length || (a.id < b.id ? -1 : 1));
  for (const { id, keys } of ranked) {
    let cap = min;
    if (extras > 0 && keys.length > min) {
      cap = min + 1;
      extras--;
    }
    for (const key of keys.slice(cap)) {
      next.get(id)!.delete(key);
      revoked.get(id)!.add(key);
    }
  }
}

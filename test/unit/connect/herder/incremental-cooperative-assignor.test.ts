import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ConnectorTaskId } from '../../../../src/connect/herder/herder.ts';
import {
  type AssignorMember,
  type AssignorResult,
  type AssignorState,
  assignIncrementally,
  connectorKey,
  initialAssignorState,
  type Owner,
  taskKey,
  type WorkItem,
  type WorkLoad,
} from '../../../../src/connect/herder/incremental-cooperative-assignor.ts';

/** A simulated group: members apply their assignments as a real worker does. */
class Cluster {
  members = new Map<string, { url: string; load: Set<string> }>();
  state: AssignorState = initialAssignorState();
  generation = 0;
  lastCompleted = -1;
  now = 1_000;
  /** Keys that a cleanly stopped member released. */
  released = new Set<string>();

  constructor(
    public configured: Map<string, number>,
    public maxDelayMs = 10_000,
  ) {}

  add(id: string, url = `http://${id}:8083`): void {
    this.members.set(id, { url, load: new Set() });
  }

  leaveCleanly(id: string): void {
    for (const k of this.members.get(id)!.load) this.released.add(k);
    this.members.delete(id);
  }

  crash(id: string): void {
    this.members.delete(id);
  }

  round(): AssignorResult {
    this.generation++;
    const input: AssignorMember[] = [...this.members].map(([memberId, m]) => ({
      memberId,
      url: m.url,
      running: toLoad(m.load),
    }));
    const released = this.released;
    const result = assignIncrementally({
      members: input,
      configured: this.configured,
      generation: this.generation,
      lastCompletedGeneration: this.lastCompleted,
      now: this.now,
      maxDelayMs: this.maxDelayMs,
      state: this.state,
      released: (item: WorkItem, _owner: Owner) => released.has(keyOf(item)),
    });
    for (const [id, a] of result.assignments) {
      const load = this.members.get(id)!.load;
      for (const k of loadKeys(a.revoked)) load.delete(k);
      for (const k of loadKeys(a.assigned)) load.add(k);
    }
    this.state = result.state;
    this.lastCompleted = this.generation;
    this.released = new Set();
    return result;
  }

  /** Rebalances until no member has revocations and no delay is pending (advancing time past delays). */
  settle(): AssignorResult[] {
    const rounds: AssignorResult[] = [];
    for (let i = 0; i < 10; i++) {
      const r = this.round();
      rounds.push(r);
      this.assertNoDuplicates();
      const revoking = [...r.assignments.values()].some(
        (a) => a.revoked.connectors.length + a.revoked.tasks.length > 0,
      );
      if (r.delay > 0) this.now += r.delay;
      else if (!revoking) return rounds;
    }
    throw new Error('did not settle in 10 rounds');
  }

  assertNoDuplicates(): void {
    const seen = new Map<string, string>();
    for (const [id, m] of this.members) {
      for (const k of m.load) {
        expect(seen.get(k), `${k} on ${seen.get(k)} and ${id}`).toBeUndefined();
        seen.set(k, id);
      }
    }
  }

  wanted(): string[] {
    const keys: string[] = [];
    for (const [name, n] of this.configured) {
      keys.push(connectorKey(name));
      for (let t = 0; t < n; t++) keys.push(taskKey({ connector: name, task: t }));
    }
    return keys.sort();
  }

  allAssigned(): string[] {
    return [...this.members.values()].flatMap((m) => [...m.load]).sort();
  }

  counts(kind: 'c' | 't'): number[] {
    return [...this.members.values()].map((m) => [...m.load].filter((k) => k[0] === kind).length);
  }
}

function keyOf(item: WorkItem): string {
  return item.task === undefined
    ? connectorKey(item.connector)
    : taskKey({ connector: item.connector, task: item.task });
}

function loadKeys(load: WorkLoad): string[] {
  return [...load.connectors.map(connectorKey), ...load.tasks.map(taskKey)];
}

function toLoad(keys: Set<string>): WorkLoad {
  const connectors: string[] = [];
  const tasks: ConnectorTaskId[] = [];
  for (const k of keys) {
    if (k.startsWith('c:')) connectors.push(k.slice(2));
    else {
      const colon = k.indexOf(':', 2);
      tasks.push({ connector: k.slice(colon + 1), task: Number(k.slice(2, colon)) });
    }
  }
  return { connectors, tasks };
}

function spread(values: number[]): number {
  return values.length === 0 ? 0 : Math.max(...values) - Math.min(...values);
}

function tasksOf(r: AssignorResult, id: string): string[] {
  return r.assignments.get(id)!.assigned.tasks.map((t) => `${t.connector}-${t.task}`);
}

describe('incremental cooperative assignor', () => {
  it('spreads one connector with six tasks two-two-two over three new members', () => {
    const c = new Cluster(new Map([['src', 6]]));
    for (const id of ['a', 'b', 'c']) c.add(id);
    c.settle();
    expect(c.counts('t')).toEqual([2, 2, 2]);
    expect(c.allAssigned()).toEqual(c.wanted());
  });

  it('moves only the excess to a member that joins, revoking from the busiest first', () => {
    const c = new Cluster(new Map([['src', 6]]));
    c.add('a');
    c.add('b');
    c.settle();
    c.add('c');
    const first = c.round();
    const revokedTasks = [...first.assignments.values()].flatMap((a) => a.revoked.tasks);
    expect(revokedTasks).toHaveLength(2);
    expect(tasksOf(first, 'c')).toEqual([]);
    const second = c.round();
    expect(second.assignments.get('c')!.assigned.tasks).toHaveLength(2);
    expect(c.counts('t')).toEqual([2, 2, 2]);
  });

  it('reassigns the work of a member that left cleanly in the very next round', () => {
    const c = new Cluster(new Map([['src', 6]]));
    for (const id of ['a', 'b', 'c']) c.add(id);
    c.settle();
    c.leaveCleanly('b');
    const r = c.round();
    expect(r.delay).toBe(0);
    expect(c.allAssigned()).toEqual(c.wanted());
    expect(c.counts('t').sort()).toEqual([3, 3]);
  });

  it('holds the work of a vanished member for the delay, then spreads it', () => {
    const c = new Cluster(new Map([['src', 6]]), 10_000);
    for (const id of ['a', 'b', 'c']) c.add(id);
    c.settle();
    const onB = c.members.get('b')!.load.size;
    c.crash('b');
    const held = c.round();
    expect(held.delay).toBe(10_000);
    expect(c.allAssigned()).toHaveLength(c.wanted().length - onB);
    c.now += 4_000;
    expect(c.round().delay).toBe(6_000);
    c.now += 6_000;
    const spreadRound = c.round();
    expect(spreadRound.delay).toBe(0);
    expect(c.allAssigned()).toEqual(c.wanted());
  });

  it('gives a restarted member (same URL, new member id) its work back at once', () => {
    const c = new Cluster(new Map([['src', 6]]), 10_000);
    for (const id of ['a', 'b', 'c']) c.add(id);
    c.settle();
    const before = [...c.members.get('b')!.load].sort();
    c.crash('b');
    c.round();
    c.add('b2', 'http://b:8083');
    const back = c.round();
    expect(back.delay).toBe(0);
    expect([...c.members.get('b2')!.load].sort()).toEqual(before);
  });

  it('revokes the work of a deleted connector and assigns the tasks of a new one', () => {
    const c = new Cluster(new Map([['old', 2]]));
    c.add('a');
    c.settle();
    c.configured = new Map([['new', 1]]);
    const r = c.round();
    expect(r.assignments.get('a')!.revoked).toEqual({
      connectors: ['old'],
      tasks: [
        { connector: 'old', task: 0 },
        { connector: 'old', task: 1 },
      ],
    });
    expect(r.assignments.get('a')!.assigned.connectors).toEqual(['new']);
  });

  it('keeps a task reported by two members on one of them only', () => {
    const r = assignIncrementally({
      members: [
        {
          memberId: 'a',
          url: 'a',
          running: { connectors: [], tasks: [{ connector: 'x', task: 0 }] },
        },
        {
          memberId: 'b',
          url: 'b',
          running: { connectors: [], tasks: [{ connector: 'x', task: 0 }] },
        },
      ],
      configured: new Map([['x', 1]]),
      generation: 1,
      lastCompletedGeneration: -1,
      now: 0,
      maxDelayMs: 1000,
      state: initialAssignorState(),
    });
    expect(r.assignments.get('b')!.revoked.tasks).toEqual([{ connector: 'x', task: 0 }]);
    expect(r.assignments.get('a')!.revoked.tasks).toEqual([]);
  });

  // ---- properties -----------------------------------------------------------------

  const configArb = fc.dictionary(
    fc.string({ minLength: 1, maxLength: 4 }),
    fc.integer({ min: 0, max: 8 }),
    { minKeys: 0, maxKeys: 6 },
  );
  type Event =
    | { kind: 'join' }
    | { kind: 'leave'; index: number }
    | { kind: 'crash'; index: number }
    | { kind: 'restart'; index: number }
    | { kind: 'reconfigure'; config: Record<string, number> }
    | { kind: 'time'; ms: number };
  const eventArb: fc.Arbitrary<Event> = fc.oneof(
    fc.constant({ kind: 'join' as const }),
    fc.record({ kind: fc.constant('leave' as const), index: fc.nat() }),
    fc.record({ kind: fc.constant('crash' as const), index: fc.nat() }),
    fc.record({ kind: fc.constant('restart' as const), index: fc.nat() }),
    fc.record({ kind: fc.constant('reconfigure' as const), config: configArb }),
    fc.record({ kind: fc.constant('time' as const), ms: fc.integer({ min: 0, max: 20_000 }) }),
  );

  it('never gives one item to two members, and after the follow-up rebalances assigns every item exactly once, balanced within one', () => {
    fc.assert(
      fc.property(
        configArb,
        fc.integer({ min: 1, max: 5 }),
        fc.array(eventArb, { maxLength: 12 }),
        (config, initialMembers, events) => {
          const c = new Cluster(new Map(Object.entries(config)), 10_000);
          let nextId = 0;
          for (let i = 0; i < initialMembers; i++) c.add(`m${nextId++}`);
          c.settle();
          for (const e of events) {
            const ids = [...c.members.keys()];
            if (e.kind === 'join') c.add(`m${nextId++}`);
            else if (e.kind === 'leave' && ids.length > 1)
              c.leaveCleanly(ids[e.index % ids.length]!);
            else if (e.kind === 'crash' && ids.length > 1) c.crash(ids[e.index % ids.length]!);
            else if (e.kind === 'restart') {
              // Same worker (URL), new process (member id).
              const id = ids[e.index % ids.length]!;
              const url = c.members.get(id)!.url;
              c.crash(id);
              c.add(`m${nextId++}`, url);
            } else if (e.kind === 'reconfigure') c.configured = new Map(Object.entries(e.config));
            else if (e.kind === 'time') c.now += e.ms;
            c.round();
            c.assertNoDuplicates();
          }
          c.settle();
          expect(c.allAssigned()).toEqual(c.wanted());
          expect(spread(c.counts('c'))).toBeLessThanOrEqual(1);
          expect(spread(c.counts('t'))).toBeLessThanOrEqual(1);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('revokes and assigns nothing once the membership and configs are stable', () => {
    fc.assert(
      fc.property(configArb, fc.integer({ min: 1, max: 6 }), (config, n) => {
        const c = new Cluster(new Map(Object.entries(config)));
        for (let i = 0; i < n; i++) c.add(`m${i}`);
        c.settle();
        const again = c.round();
        for (const a of again.assignments.values()) {
          expect(a.revoked).toEqual({ connectors: [], tasks: [] });
          expect(a.assigned).toEqual({ connectors: [], tasks: [] });
        }
        expect(again.delay).toBe(0);
      }),
      { numRuns: 200 },
    );
  });
});

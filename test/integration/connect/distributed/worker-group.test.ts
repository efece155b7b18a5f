/**
 * Three `connect` group members in one process against the embedded broker, each
 * with a small stand-in herder that records what it owns. The properties checked are
 * the ones the distributed herder builds on: the assignor spreads six tasks 2-2-2; a
 * clean leave hands the leaver's tasks over in the next generation; a member cut off
 * from the coordinator drops its work before the others are given it, and they are
 * given it only after the scheduled delay; a task is never owned by two members.
 */
import { EventEmitter } from 'node:events';
import { createServer, Socket as NetSocket, type Server, type Socket } from 'node:net';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { WorkLoad } from '../../../../src/connect/herder/incremental-cooperative-assignor.ts';
import {
  type AssignmentEvent,
  type LeaderSnapshot,
  WorkerGroupMember,
  type WorkerGroupMemberOptions,
} from '../../../../src/connect/herder/worker-group-member.ts';
import { KafkaStatusBackingStore } from '../../../../src/connect/storage/kafka-status-backing-store.ts';
import { BrokerConnection } from '../../../../src/protocol/client/broker-connection.ts';
import { ClusterClient } from '../../../../src/protocol/client/cluster-client.ts';
import { systemClock } from '../../../../src/util/clock.ts';
import { getLogger } from '../../../../src/util/logger.ts';
import { systemTimers } from '../../../../src/util/timers.ts';
import { startTestBroker, type TestBroker } from '../../../helpers/broker.ts';

let broker: TestBroker;
let producer: Producer;

beforeAll(async () => {
  broker = await startTestBroker({
    config: { 'group.min.session.timeout.ms': 100, 'group.initial.rebalance.delay.ms': 0 },
  });
  producer = new Kafka({ brokers: [broker.bootstrap], logLevel: logLevel.NOTHING }).producer({
    idempotent: true,
  });
  await producer.connect();
});

afterAll(async () => {
  await producer?.disconnect();
  await broker?.stop();
});

type Entry =
  | { kind: 'assigned'; worker: string; event: AssignmentEvent }
  | { kind: 'revoked'; worker: string; work: WorkLoad }
  | { kind: 'lost'; worker: string; work: WorkLoad };

const keys = (w: WorkLoad) => [
  ...w.connectors.map((c) => `connector ${c}`),
  ...w.tasks.map((t) => `task ${t.connector}-${t.task}`),
];

/** What every stand-in herder shares: the ordered log and who owns what now. */
class Cluster extends EventEmitter {
  readonly log: Entry[] = [];
  readonly owner = new Map<string, string>();
  readonly violations: string[] = [];

  record(entry: Entry): void {
    this.log.push(entry);
    if (entry.kind === 'assigned') {
      for (const k of keys(entry.event.assigned)) {
        const other = this.owner.get(k);
        if (other !== undefined && other !== entry.worker) {
          this.violations.push(`${k} given to ${entry.worker} while ${other} owns it`);
        }
        this.owner.set(k, entry.worker);
      }
    } else {
      for (const k of keys(entry.work))
        if (this.owner.get(k) === entry.worker) this.owner.delete(k);
    }
    this.emit('change');
  }

  ownedBy(worker: string): string[] {
    return [...this.owner].filter(([, w]) => w === worker).map(([k]) => k);
  }

  async until(what: string, cond: () => boolean, timeoutMs = 40_000): Promise<void> {
    if (cond()) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.off('change', check);
        reject(
          new Error(`timed out waiting until ${what}; owners: ${JSON.stringify([...this.owner])}`),
        );
      }, timeoutMs);
      const check = () => {
        if (!cond()) return;
        clearTimeout(timer);
        this.off('change', check);
        resolve();
      };
      this.on('change', check);
    });
  }
}

const CONFIGURED = new Map([['src', 6]]);
const ALL = ['connector src', ...Array.from({ length: 6 }, (_, t) => `task src-${t}`)].sort();

interface TestWorker {
  name: string;
  url: string;
  member: WorkerGroupMember;
  client: ClusterClient;
  status: KafkaStatusBackingStore;
  /** Stops like a herder does: report the work UNASSIGNED, then leave. */
  stopCleanly(): Promise<void>;
  close(): Promise<void>;
}

async function startWorker(
  cluster: Cluster,
  groupId: string,
  name: string,
  overrides: Partial<WorkerGroupMemberOptions> = {},
  snapshot: (maxMemberOffset: number) => LeaderSnapshot = () => ({
    configOffset: 0,
    connectors: CONFIGURED,
  }),
): Promise<TestWorker> {
  const url = `http://${name}:8083/`;
  const client = new ClusterClient(broker.bootstrap, { clientId: name });
  const status = new KafkaStatusBackingStore({
    client,
    producer,
    topic: `${groupId}-status`,
    partitions: 5,
    replicationFactor: -1,
    logger: getLogger('test.status'),
    readMaxWaitMs: 20,
  });
  await status.start();
  const member: WorkerGroupMember = new WorkerGroupMember({
    client,
    groupId,
    url,
    sessionTimeoutMs: 1_500,
    rebalanceTimeoutMs: 5_000,
    heartbeatIntervalMs: 200,
    maxDelayMs: 60_000,
    configOffset: () => 0,
    clock: systemClock,
    timers: systemTimers,
    logger: getLogger(`test.member.${name}`),
    ...overrides,
    listener: {
      async leaderSnapshot(maxMemberOffset) {
        // The leader must see stop reports before deciding whether lost work was released.
        await status.readToEnd();
        return snapshot(maxMemberOffset);
      },
      async onRevoked(work) {
        cluster.record({ kind: 'revoked', worker: name, work });
      },
      async onAssigned(event) {
        cluster.record({ kind: 'assigned', worker: name, event });
      },
      async onMembershipLost(work) {
        cluster.record({ kind: 'lost', worker: name, work });
      },
      released(item, owner) {
        const s =
          item.task === undefined
            ? status.get(item.connector)
            : status.getTask({ connector: item.connector, task: item.task });
        return (
          s !== undefined &&
          s.state === 'UNASSIGNED' &&
          s.workerId === owner.url &&
          s.generation >= owner.generation
        );
      },
    },
  });
  member.start();
  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= (async () => {
      await member.stop();
      await status.stop();
      client.close();
    })();
    return closed;
  };
  // Torn down even if the test fails before its own cleanup.
  onTestFinished(close);
  return {
    name,
    url,
    member,
    client,
    status,
    close,
    async stopCleanly() {
      const work = member.work;
      const generation = member.generation;
      for (const c of work.connectors) {
        await status.putSafe({
          connector: c,
          state: 'UNASSIGNED',
          trace: null,
          workerId: url,
          generation,
        });
      }
      for (const id of work.tasks) {
        await status.putTaskSafe({
          id,
          state: 'UNASSIGNED',
          trace: null,
          workerId: url,
          generation,
        });
      }
      cluster.record({ kind: 'revoked', worker: name, work });
      await close();
    },
  };
}

function taskCounts(cluster: Cluster, workers: string[]): number[] {
  return workers.map((w) => cluster.ownedBy(w).filter((k) => k.startsWith('task')).length);
}

function allOwnedBy(cluster: Cluster, workers: string[]): boolean {
  const owned = workers.flatMap((w) => cluster.ownedBy(w)).sort();
  return JSON.stringify(owned) === JSON.stringify(ALL);
}

/** A TCP relay that can go silent (no data either way, connections left open). */
async function startRelay(
  port: number,
): Promise<{ port: number; freeze(): void; thaw(): void; close(): Promise<void> }> {
  let frozen = false;
  let closing: Promise<void> | undefined;
  const sockets = new Set<Socket>();
  const close = () => {
    closing ??= new Promise<void>((r) => {
      for (const s of sockets) s.destroy();
      server.close(() => r());
    });
    return closing;
  };
  const server: Server = createServer((downstream) => {
    const upstream = new NetSocket();
    sockets.add(downstream);
    sockets.add(upstream);
    upstream.connect(port, '127.0.0.1');
    const relay = (from: Socket, to: Socket) =>
      from.on('data', (chunk) => {
        if (!frozen) to.write(chunk);
      });
    relay(downstream, upstream);
    relay(upstream, downstream);
    const end = () => {
      downstream.destroy();
      upstream.destroy();
      sockets.delete(downstream);
      sockets.delete(upstream);
    };
    downstream.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  onTestFinished(() => close());
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('relay has no port');
  return {
    port: address.port,
    freeze: () => {
      frozen = true;
    },
    thaw: () => {
      frozen = false;
    },
    close,
  };
}

describe('connect group membership', () => {
  it('spreads six tasks 2-2-2, and hands a cleanly leaving member tasks over in the next generation', async () => {
    const cluster = new Cluster();
    const workers = [
      await startWorker(cluster, 'group-a', 'w1'),
      await startWorker(cluster, 'group-a', 'w2'),
      await startWorker(cluster, 'group-a', 'w3'),
    ];
    try {
      await cluster.until('the tasks are spread 2-2-2', () => {
        return (
          allOwnedBy(cluster, ['w1', 'w2', 'w3']) &&
          taskCounts(cluster, ['w1', 'w2', 'w3']).join() === '2,2,2'
        );
      });
      expect(new Set(workers.map((w) => w.member.leaderId)).size).toBe(1);
      expect(workers.filter((w) => w.member.isLeader)).toHaveLength(1);
      // A non-leader leaves, so the remaining leader keeps its assignor state.
      const leaver = workers.find((w) => !w.member.isLeader)!;
      const stay = workers.filter((w) => w !== leaver).map((w) => w.name);
      const generation = leaver.member.generation;
      await leaver.stopCleanly();
      await cluster.until('the other two own everything', () => allOwnedBy(cluster, stay));
      expect(taskCounts(cluster, stay)).toEqual([3, 3]);
      const handover = cluster.log.filter(
        (e) =>
          e.kind === 'assigned' &&
          e.event.assigned.tasks.length > 0 &&
          e.event.generation > generation,
      );
      // Released work is not held: the very next generation places it, with no delay.
      expect(handover.map((e) => (e.kind === 'assigned' ? e.event.generation : -1))).toEqual(
        handover.map(() => generation + 1),
      );
      expect(handover.every((e) => e.kind === 'assigned' && e.event.delay === 0)).toBe(true);
      expect(cluster.violations).toEqual([]);
    } finally {
      for (const w of workers) await w.close();
    }
  });

  it('makes a member that cannot reach the coordinator drop its work before the others get it after the delay; it gets work back when it returns', async () => {
    const cluster = new Cluster();
    const relay = await startRelay(broker.port);
    const overrides = { maxDelayMs: 2_000 };
    const workers = [
      await startWorker(cluster, 'group-b', 'w1', overrides),
      await startWorker(cluster, 'group-b', 'w2', overrides),
    ];
    try {
      await cluster.until('two members own everything', () => allOwnedBy(cluster, ['w1', 'w2']));
      const cut = await startWorker(cluster, 'group-b', 'w3', {
        ...overrides,
        openConnection: (host, _port) =>
          BrokerConnection.connect(host, relay.port, {
            clientId: 'w3',
            connectTimeoutMs: 1_000,
            requestTimeoutMs: 1_500,
          }),
      });
      workers.push(cut);
      await cluster.until('the tasks are spread 2-2-2', () => {
        return (
          allOwnedBy(cluster, ['w1', 'w2', 'w3']) &&
          taskCounts(cluster, ['w1', 'w2', 'w3']).join() === '2,2,2'
        );
      });
      const cutWork = cluster.ownedBy('w3');
      const before = cluster.log.length;
      relay.freeze();
      await cluster.until('w1 and w2 own everything', () => allOwnedBy(cluster, ['w1', 'w2']));
      const after = cluster.log.slice(before);
      const lostAt = after.findIndex((e) => e.kind === 'lost' && e.worker === 'w3');
      const takenAt = after.findIndex(
        (e) => e.kind === 'assigned' && keys(e.event.assigned).some((k) => cutWork.includes(k)),
      );
      expect(lostAt).toBeGreaterThanOrEqual(0);
      expect(takenAt).toBeGreaterThan(lostAt);
      // Before taking it, the survivors were told to wait for the scheduled delay.
      expect(after.slice(0, takenAt).some((e) => e.kind === 'assigned' && e.event.delay > 0)).toBe(
        true,
      );

      relay.thaw();
      await cluster.until('balance returns with w3 back', () => {
        return (
          allOwnedBy(cluster, ['w1', 'w2', 'w3']) &&
          taskCounts(cluster, ['w1', 'w2', 'w3']).join() === '2,2,2'
        );
      });
      expect(cluster.violations).toEqual([]);
    } finally {
      for (const w of workers) await w.close();
      await relay.close();
    }
  });

  it('settles on the eager "default" protocol when one member speaks only that, and still spreads and hands over work', async () => {
    const cluster = new Cluster();
    const workers = [
      await startWorker(cluster, 'group-c', 'w1', { mode: 'eager' }),
      await startWorker(cluster, 'group-c', 'w2'),
      await startWorker(cluster, 'group-c', 'w3', { mode: 'compatible' }),
    ];
    try {
      await cluster.until('the tasks are spread 2-2-2', () => {
        return (
          allOwnedBy(cluster, ['w1', 'w2', 'w3']) &&
          taskCounts(cluster, ['w1', 'w2', 'w3']).join() === '2,2,2'
        );
      });
      const protocols = new Set(
        cluster.log.flatMap((e) => (e.kind === 'assigned' ? [e.event.protocol] : [])),
      );
      expect(protocols).toEqual(new Set(['default']));
      await workers[0]!.stopCleanly();
      await cluster.until('the other two own everything', () => allOwnedBy(cluster, ['w2', 'w3']));
      expect(cluster.violations).toEqual([]);
    } finally {
      for (const w of workers) await w.close();
    }
  });

  it('assigns nothing while the leader is behind the config offset a member has read', async () => {
    const cluster = new Cluster();
    let leaderOffset = 3;
    const snapshot = (maxMemberOffset: number) => {
      // The first time the leader is behind; asked again, it has caught up.
      const answer = { configOffset: leaderOffset, connectors: CONFIGURED };
      leaderOffset = Math.max(leaderOffset, maxMemberOffset);
      return answer;
    };
    const workers = [
      await startWorker(cluster, 'group-d', 'w1', { configOffset: () => 3 }, snapshot),
    ];
    try {
      await cluster.until('w1 owns everything', () => allOwnedBy(cluster, ['w1']));
      workers.push(
        await startWorker(cluster, 'group-d', 'w2', { configOffset: () => 9 }, snapshot),
      );
      await cluster.until('w1 and w2 own everything', () => {
        return allOwnedBy(cluster, ['w1', 'w2']) && cluster.ownedBy('w2').length > 0;
      });
      const mismatches = cluster.log.filter((e) => e.kind === 'assigned' && e.event.error === 1);
      expect(mismatches.length).toBeGreaterThan(0);
      expect(
        mismatches.every((e) => e.kind === 'assigned' && e.event.assigned.tasks.length === 0),
      ).toBe(true);
      const first = cluster.log.find(
        (e) => e.kind === 'assigned' && e.worker === 'w2' && e.event.assigned.tasks.length > 0,
      );
      expect(first?.kind === 'assigned' && first.event.configOffset).toBe(9);
    } finally {
      for (const w of workers) await w.close();
    }
  });
});

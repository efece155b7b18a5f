/**
 * The rolling upgrade of KIP-618 (Kafka's docs: "two rolling upgrades"): two `connect
 * worker` processes move exactly.once.source.support disabled -> preparing -> enabled,
 * one restart at a time, while a datagen source keeps producing. KIP-618's guarantee:
 * at-least-once throughout the upgrade, exactly-once once every worker runs enabled.
 * A read_committed reader then finds every sequence number of each task at least once,
 * and exactly once each number produced after the last worker came back enabled. Each
 * task says at its start which delivery it runs and why.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { startTestBroker, type TestBroker } from '../../helpers/broker.ts';
import { readCommitted } from '../broker/helpers/transaction-reader.ts';
import {
  baseOverrides,
  rest,
  startWorker,
  type WorkerProcess,
  waitFor,
} from './distributed-helpers.ts';

const TASKS = 2;
type Mode = 'disabled' | 'preparing' | 'enabled';

/** Per datagen task (seq mod TASKS), how often each of its numbers is in the topic. */
async function countsByTask(broker: TestBroker): Promise<Array<Map<number, number>>> {
  const counts = Array.from({ length: TASKS }, () => new Map<number, number>());
  for (const r of await readCommitted(broker.bootstrap, 'gen', 1)) {
    const seq = JSON.parse(r.value!.toString('utf8')).seq as number;
    const c = counts[seq % TASKS] as Map<number, number>;
    c.set(seq, (c.get(seq) ?? 0) + 1);
  }
  return counts;
}

const maxOf = (m: Map<number, number>) => Math.max(-1, ...m.keys());

describe('exactly-once rolling upgrade', () => {
  // Six worker starts, five of them one after another (a restart is the upgrade step):
  // the timeout leaves room for a loaded machine.
  it('disabled -> preparing -> enabled one worker at a time loses nothing, and repeats nothing once all are enabled', async () => {
    const broker = await startTestBroker({
      config: { 'group.min.session.timeout.ms': 500, 'transaction.state.log.num.partitions': 3 },
    });
    const workers: WorkerProcess[] = [];
    const all: WorkerProcess[] = [];
    onTestFinished(async () => {
      for (const w of workers) await w.process.stop();
      await broker.stop();
    });
    const start = async (mode: Mode) => {
      const w = await startWorker([
        '-o',
        `bootstrap.servers=${broker.bootstrap}`,
        ...baseOverrides({
          'scheduled.rebalance.max.delay.ms': '0',
          'offset.storage.partitions': '3',
          'exactly.once.source.support': mode,
        }),
      ]);
      all.push(w);
      return w;
    };
    workers.push(...(await Promise.all([start('disabled'), start('disabled')])));
    const created = await rest(workers[0]!, 'PUT', '/connectors/gen/config', {
      'connector.class': 'DatagenConnector',
      topic: 'gen',
      'tasks.max': String(TASKS),
      'records.per.second': '200',
      'batch.size': '10',
      'value.converter': 'org.apache.kafka.connect.json.JsonConverter',
      'value.converter.schemas.enable': 'false',
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);

    /** Both tasks RUNNING on the workers now up (a restarted worker has a new id). */
    const settled = () =>
      waitFor(
        'both tasks running on the current workers',
        async () => {
          const s = await rest(workers[0]!, 'GET', '/connectors/gen/status');
          const ids = new Set(workers.map((w) => w.id));
          const tasks = (s.body?.tasks ?? []) as Array<{ state: string; worker_id: string }>;
          return tasks.length === TASKS &&
            tasks.every((t) => t.state === 'RUNNING' && ids.has(t.worker_id))
            ? true
            : undefined;
        },
        30_000,
      );
    await settled();
    for (const mode of ['preparing', 'enabled'] as const) {
      for (let i = 0; i < workers.length; i++) {
        await workers[i]!.process.stop();
        workers[i] = await start(mode);
      }
    }
    await settled();

    // Every worker runs enabled from here on: what is produced next is exactly-once.
    const mark = (await countsByTask(broker)).map(maxOf);
    await waitFor(
      'each task produced more after the upgrade',
      async () =>
        (await countsByTask(broker)).every((c, t) => maxOf(c) >= (mark[t] as number) + 20 * TASKS)
          ? true
          : undefined,
      30_000,
    );
    expect((await rest(workers[0]!, 'PUT', '/connectors/gen/stop')).status).toBe(204);
    await waitFor(
      'gen stopped',
      async () => {
        const s = await rest(workers[0]!, 'GET', '/connectors/gen/status');
        return s.body?.connector?.state === 'STOPPED' && s.body.tasks.length === 0
          ? true
          : undefined;
      },
      30_000,
    );

    const counts = await countsByTask(broker);
    counts.forEach((c, t) => {
      // At least once throughout: no gap in the task's numbers.
      const missing: number[] = [];
      for (let seq = t; seq <= maxOf(c); seq += TASKS) if (!c.has(seq)) missing.push(seq);
      expect(missing, `task ${t} lost numbers`).toEqual([]);
      // Exactly once after the last worker came back enabled.
      const repeated = [...c].filter(([seq, n]) => seq > (mark[t] as number) && n !== 1);
      expect(repeated, `task ${t} repeated numbers after the upgrade`).toEqual([]);
    });

    // Each task start said which delivery it runs: at-least-once with the worker's
    // mode while preparing, exactly-once with its transactional id once enabled.
    const output = all.flatMap((w) => w.process.output());
    expect(
      output.some((l) =>
        l.includes('runs at-least-once (exactly.once.source.support=preparing on this worker)'),
      ),
    ).toBe(true);
    expect(
      output.some((l) => l.includes('runs exactly-once: transactional.id connect-cluster-gen-')),
    ).toBe(true);
  }, 120_000);
});

/**
 * Exactly-once source connectors (KIP-618) on `connect worker` child processes, with
 * the broker in the test process so it outlives every worker:
 *   - KIP-618's validation answers with Kafka's messages;
 *   - a datagen connector with exactly-once required: a read_committed reader finds
 *     every sequence number once, the offsets went through transactions, and the
 *     config topic holds the task count record (`tasks-fencing-<name>`) of each
 *     generation that was fenced;
 *   - zombie fencing: the worker running a task is frozen (SIGSTOP) until the other
 *     takes the task over, then resumed; it can commit nothing more, and the reader
 *     still finds every number exactly once;
 *   - the same freeze with exactly-once disabled and a long offset flush interval
 *     repeats records, so the test tells the two modes apart.
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

const RECORDS = 4000;

async function cluster(
  extra: Record<string, string>,
  count: number,
): Promise<{ broker: TestBroker; workers: WorkerProcess[] }> {
  const broker = await startTestBroker({
    config: { 'group.min.session.timeout.ms': 500, 'transaction.state.log.num.partitions': 3 },
  });
  const workers: WorkerProcess[] = [];
  onTestFinished(async () => {
    for (const w of workers) {
      w.process.signal('SIGCONT');
      await w.process.stop();
    }
    await broker.stop();
  });
  const args = [
    '-o',
    `bootstrap.servers=${broker.bootstrap}`,
    ...baseOverrides({
      'scheduled.rebalance.max.delay.ms': '0',
      'offset.storage.partitions': '3',
      'session.timeout.ms': '1500',
      ...extra,
    }),
  ];
  workers.push(...(await Promise.all(Array.from({ length: count }, () => startWorker(args)))));
  return { broker, workers };
}

function datagen(extra: Record<string, string> = {}): Record<string, string> {
  return {
    'connector.class': 'DatagenConnector',
    topic: 'gen',
    'tasks.max': '2',
    iterations: String(RECORDS),
    'records.per.second': '1500',
    'batch.size': '50',
    'value.converter': 'org.apache.kafka.connect.json.JsonConverter',
    'value.converter.schemas.enable': 'false',
    ...extra,
  };
}

/** How often each sequence number is in the topic, for a read_committed reader. */
async function sequenceCounts(bootstrap: string): Promise<Map<number, number>> {
  const counts = new Map<number, number>();
  for (const r of await readCommitted(bootstrap, 'gen', 1)) {
    const seq = JSON.parse(r.value!.toString('utf8')).seq as number;
    counts.set(seq, (counts.get(seq) ?? 0) + 1);
  }
  return counts;
}

async function taskOwner(w: WorkerProcess, task: number): Promise<string | undefined> {
  const s = await rest(w, 'GET', '/connectors/gen/status');
  const t = s.status === 200 ? s.body.tasks?.find((x: { id: number }) => x.id === task) : undefined;
  return t?.state === 'RUNNING' ? t.worker_id : undefined;
}

/**
 * Freezes the worker running task 0 until the other worker runs it, then lets it go
 * on, and waits until every number was produced (or `RECORDS` distinct ones seen).
 */
async function freezeOwnerOfTask0(
  broker: TestBroker,
  workers: WorkerProcess[],
): Promise<{ frozen: WorkerProcess; counts: Map<number, number> }> {
  const owner = await waitFor('task 0 running', () => taskOwner(workers[0]!, 0), 30_000);
  const frozen = workers.find((w) => w.id === owner)!;
  const other = workers.find((w) => w !== frozen)!;
  await waitFor(
    'records flowing',
    async () => ((await sequenceCounts(broker.bootstrap)).size > 500 ? true : undefined),
    30_000,
  );
  frozen.process.signal('SIGSTOP');
  await waitFor(
    'task 0 taken over',
    async () => ((await taskOwner(other, 0)) === other.id ? true : undefined),
    60_000,
  );
  frozen.process.signal('SIGCONT');
  const counts = await waitFor(
    `all ${RECORDS} numbers in the topic`,
    async () => {
      const c = await sequenceCounts(broker.bootstrap);
      return c.size === RECORDS ? c : undefined;
    },
    90_000,
  );
  return { frozen, counts };
}

describe('exactly-once source connectors', () => {
  it('validates with KIP-618 messages, commits records with their offsets, and records fencing', async () => {
    const { broker, workers } = await cluster({ 'exactly.once.source.support': 'enabled' }, 1);
    const w = workers[0]!;

    const validate = async (fields: Record<string, string>) => {
      const config: Record<string, string> = { name: 'v', ...fields };
      const r = await rest(
        w,
        'PUT',
        `/connector-plugins/${config['connector.class']}/config/validate`,
        config,
      );
      expect(r.status).toBe(200);
      const errors: Record<string, string[]> = {};
      for (const c of r.body.configs)
        if (c.value.errors.length > 0) errors[c.value.name] = c.value.errors;
      return errors;
    };
    expect(await validate(datagen({ 'transaction.boundary': 'connector' }))).toEqual({
      'transaction.boundary': [
        'The connector does not support connector-defined transaction boundaries with the given configuration. Please reconfigure it to use a different transaction boundary definition.',
      ],
    });
    // File source without a file: Kafka's answer for stdin (the missing file is refused too).
    const fileErrors = await validate({
      'connector.class': 'FileStreamSource',
      topic: 't',
      'exactly.once.support': 'required',
    });
    expect(fileErrors['exactly.once.support']).toEqual([
      'The connector does not support exactly-once semantics with the provided configuration.',
    ]);
    expect(await validate(datagen({ 'exactly.once.support': 'required' }))).toEqual({});

    const created = await rest(
      w,
      'PUT',
      '/connectors/gen/config',
      datagen({ 'exactly.once.support': 'required' }),
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const counts = await waitFor(
      `all ${RECORDS} numbers in the topic`,
      async () => {
        const c = await sequenceCounts(broker.bootstrap);
        return c.size === RECORDS ? c : undefined;
      },
      60_000,
    );
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(
      w.process
        .output()
        .some((l) => l.includes('runs exactly-once: transactional.id connect-cluster-gen-0')),
    ).toBe(true);

    // The offsets are in the offsets topic, written by the tasks' transactions.
    const offsets = await readCommitted(broker.bootstrap, 'connect-offsets', 3);
    const genOffsets = offsets.filter((r) => r.key?.toString('utf8').startsWith('["gen",'));
    expect(genOffsets.length).toBeGreaterThan(0);
    const last = new Map(
      genOffsets.map((r) => [r.key!.toString('utf8'), JSON.parse(r.value!.toString('utf8'))]),
    );
    expect([...last.values()].map((o) => o.seq).sort((a, b) => a - b)).toEqual([
      RECORDS - 2,
      RECORDS - 1,
    ]);

    // A new generation (tasks.max 2 -> 1) is fenced before it runs: a new task count record.
    const updated = await rest(
      w,
      'PUT',
      '/connectors/gen/config',
      datagen({ 'tasks.max': '1', iterations: '10' }),
    );
    expect(updated.status).toBe(200);
    const fencing = await waitFor(
      'task count records 2 then 1',
      async () => {
        const records = (await readCommitted(broker.bootstrap, 'connect-configs', 1))
          .filter((r) => r.key?.toString('utf8') === 'tasks-fencing-gen')
          .map((r) => JSON.parse(r.value!.toString('utf8')));
        return records.length >= 2 ? records : undefined;
      },
      30_000,
    );
    expect(fencing.slice(0, 2)).toEqual([{ 'task-count': 2 }, { 'task-count': 1 }]);
  });

  it('fences a frozen worker: after it resumes nothing it sends is committed', async () => {
    const { broker, workers } = await cluster({ 'exactly.once.source.support': 'enabled' }, 2);
    expect((await rest(workers[0]!, 'PUT', '/connectors/gen/config', datagen())).status).toBe(201);
    const { frozen, counts } = await freezeOwnerOfTask0(broker, workers);
    const repeated = [...counts].filter(([, n]) => n !== 1);
    expect(repeated).toEqual([]);
    // The resumed worker rejoined and runs no second copy of task 0: one RUNNING
    // task 0, and the numbers stay exactly once after it had every chance to write.
    await waitFor(
      'the cluster settled with the resumed worker in it',
      async () => {
        const s = await rest(frozen, 'GET', '/connectors/gen/status');
        return s.status === 200 &&
          s.body.tasks?.every((t: { state: string }) => t.state === 'RUNNING')
          ? true
          : undefined;
      },
      30_000,
    );
    expect(frozen.process.isRunning).toBe(true);
    expect([...(await sequenceCounts(broker.bootstrap))].filter(([, n]) => n !== 1)).toEqual([]);
  });

  it('without exactly-once the same freeze repeats records (at-least-once)', async () => {
    const { broker, workers } = await cluster({ 'offset.flush.interval.ms': '60000' }, 2);
    const config = datagen({ 'transaction.boundary': 'poll' });
    expect((await rest(workers[0]!, 'PUT', '/connectors/gen/config', config)).status).toBe(201);
    const { counts } = await freezeOwnerOfTask0(broker, workers);
    expect([...counts.values()].some((n) => n > 1)).toBe(true);
    // The exactly-once key it carries does nothing here, and the worker says so.
    expect(
      workers.some((w) =>
        w.process
          .output()
          .some((l) => l.includes('runs at-least-once: transaction.boundary take effect only')),
      ),
    ).toBe(true);
  });
});

/**
 * Exactly-once under crash: a consume-transform-produce child process
 * (helpers/transaction-copier.ts, the project's GroupConsumer and TransactionalProducer)
 * copies 100k records from an input topic to an output topic, one transaction per
 * fetched batch, and is killed with SIGKILL at random points (also in the middle of a
 * transaction) and restarted until the group's committed offsets reach the input's
 * end. A read_committed reader of the output then finds every input record exactly
 * once, and in input order per partition.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ClusterClient } from '../../../src/protocol/client/cluster-client.ts';
import { IdempotentProducer } from '../../../src/protocol/client/producer.ts';
import { kafka } from '../../conformance/helpers/kafkajs.ts';
import { useBroker } from '../../helpers/broker.ts';
import { spawnProcess, type TestProcess } from '../../helpers/processes.ts';
import { waitFor } from '../../helpers/wait.ts';
import { readCommitted } from './helpers/transaction-reader.ts';

const RECORDS = 100_000;
const PARTITIONS = 4;
const KILLS = 6;
const copier = fileURLToPath(new URL('./helpers/transaction-copier.ts', import.meta.url));

/** `work`, failing with the phase's name if it takes longer than `ms` (not a timing assertion: a hang detector). */
async function phase<T>(name: string, ms: number, work: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${name} did not finish within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work(), hung]);
  } finally {
    clearTimeout(timer);
  }
}

describe('exactly-once pipeline', () => {
  it('copies every record exactly once although the copier is SIGKILLed at random points', async () => {
    const b = await useBroker({
      config: {
        'transaction.state.log.num.partitions': 3,
        // The copier's 1 s session lets a restarted member join soon after a kill.
        'group.min.session.timeout.ms': 500,
      },
    });
    const admin = kafka(b.bootstrap).admin();
    await admin.connect();
    onTestFinished(() => admin.disconnect());
    await admin.createTopics({
      topics: [
        { topic: 'in', numPartitions: PARTITIONS },
        { topic: 'out', numPartitions: PARTITIONS },
      ],
    });

    const input = new IdempotentProducer(new ClusterClient(b.bootstrap, { clientId: 'input' }));
    onTestFinished(() => input.close());
    await phase('writing the input', 30_000, async () => {
      await input.init();
      for (let i = 0; i < RECORDS; i += 5_000) {
        await input.send(
          Array.from({ length: 5_000 }, (_, j) => ({
            topic: 'in',
            partition: (i + j) % PARTITIONS,
            key: null,
            value: Buffer.from(String(i + j)),
            timestamp: null,
            headers: [],
          })),
        );
      }
    });
    const end = RECORDS / PARTITIONS;

    const copied = async () => {
      const [offsets] = await admin.fetchOffsets({ groupId: 'eos-copier', topics: ['in'] });
      return offsets!.partitions.every((p) => Number(p.offset) >= end);
    };
    const spawnCopier = (): TestProcess =>
      spawnProcess(process.execPath, ['--import', 'tsx', copier], {
        env: { BOOTSTRAP: b.bootstrap, INPUT: 'in', OUTPUT: 'out', FETCH_BYTES: '4096' },
        killGraceMs: 2_000,
      });

    let kills = 0;
    let runs = 0;
    let current: TestProcess | undefined;
    onTestFinished(async () => {
      await current?.stop();
    });
    while (!(await copied())) {
      runs++;
      current = spawnCopier();
      if (kills < KILLS) {
        // Killed at a random point once it is copying, so kills land between and
        // inside transactions, not only during start-up.
        await current.waitForLine(/^committed /, 30_000);
        await new Promise((r) => setTimeout(r, Math.random() * 400));
        if (current.isRunning) {
          current.signal('SIGKILL');
          kills++;
        }
        const status = await current.exited;
        if (status.signal !== 'SIGKILL') {
          throw new Error(`the copier exited by itself:\n${current.output().join('\n')}`);
        }
        continue;
      }
      await waitFor(
        'the copier to commit every input offset',
        () => copied().then((done) => (done ? true : undefined)),
        60_000,
      );
      await current.stop();
    }
    // Every run but the last was killed while copying (the first commit comes before
    // the kill); how many runs the copy took depends on the machine's speed.
    expect(kills).toBeGreaterThan(0);
    expect(runs - kills).toBeLessThanOrEqual(1);

    const out = await phase('reading the output', 30_000, () =>
      readCommitted(b.bootstrap, 'out', PARTITIONS),
    );
    const counts = new Map<string, number>();
    for (const r of out) {
      const v = r.value!.toString();
      counts.set(v, (counts.get(v) ?? 0) + 1);
    }
    const missing: number[] = [];
    const duplicated: string[] = [];
    for (let i = 0; i < RECORDS; i++) {
      const n = counts.get(`copy:${i}`) ?? 0;
      if (n === 0) missing.push(i);
      if (n > 1) duplicated.push(`${i} x${n}`);
    }
    expect({ missing: missing.slice(0, 10), duplicated: duplicated.slice(0, 10) }).toEqual({
      missing: [],
      duplicated: [],
    });
    expect(out.length).toBe(RECORDS);
    // Per partition, the copies are in input order (input partition p holds p, p+4, ...).
    for (let p = 0; p < PARTITIONS; p++) {
      const values = out
        .filter((r) => r.partition === p)
        .map((r) => Number(r.value!.toString().slice(5)));
      expect(values).toEqual(Array.from({ length: end }, (_, k) => p + k * PARTITIONS));
    }
  }, 90_000);
});

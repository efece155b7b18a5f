import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../helpers/broker.ts';
import { consumeAll, kcat } from './helpers/kcat.ts';

let b: TestBroker;

beforeAll(async () => {
  b = await startTestBroker({ config: { 'num.partitions': 3 } });
});
afterAll(() => b?.stop());

describe('kcat (librdkafka 2.0) against the embedded broker', () => {
  it('lists the broker and an auto-created topic with -L', async () => {
    const { stdout } = await kcat(['-b', b.bootstrap, '-L', '-t', 'listed']);
    expect(stdout).toContain(`broker 1 at 127.0.0.1:${b.port} (controller)`);
    expect(stdout).toContain('topic "listed" with 3 partitions');
  });

  it('reads back 10k keyed messages in order per partition', async () => {
    const n = 10_000;
    const lines: string[] = [];
    for (let i = 0; i < n; i++) lines.push(`key-${i % 97}:value-${i}`);
    await kcat(['-b', b.bootstrap, '-P', '-t', 'keyed', '-K:'], `${lines.join('\n')}\n`);
    const records = await consumeAll(b.bootstrap, 'keyed');
    expect(records).toHaveLength(n);
    const byPartition = new Map<number, typeof records>();
    for (const r of records)
      byPartition.set(r.partition, [...(byPartition.get(r.partition) ?? []), r]);
    expect(byPartition.size).toBe(3);
    const partitionOfKey = new Map<string, number>();
    for (const [partition, rs] of byPartition) {
      // Offsets run 0, 1, 2, ... and values keep the order they were produced in.
      expect(rs.map((r) => r.offset)).toEqual(rs.map((_, i) => i));
      const seq = rs.map((r) => Number(r.value!.slice('value-'.length)));
      expect(seq).toEqual([...seq].sort((x, y) => x - y));
      for (const r of rs) {
        expect(partitionOfKey.get(r.key!) ?? partition).toBe(partition);
        partitionOfKey.set(r.key!, partition);
        expect(r.key).toBe(`key-${Number(r.value!.slice(6)) % 97}`);
      }
    }
  });

  it.each(['gzip', 'snappy', 'lz4', 'zstd'])(
    'produces and consumes with compression.codec=%s',
    async (codec) => {
      const topic = `codec-${codec}`;
      const lines = Array.from(
        { length: 2000 },
        (_, i) => `k${i % 10}:${codec}-${i}-${'x'.repeat(i % 50)}`,
      );
      await kcat(
        ['-b', b.bootstrap, '-P', '-t', topic, '-K:', '-X', `compression.codec=${codec}`],
        `${lines.join('\n')}\n`,
      );
      const records = await consumeAll(b.bootstrap, topic);
      expect(records.map((r) => `${r.key}:${r.value}`).sort()).toEqual([...lines].sort());
    },
  );
});

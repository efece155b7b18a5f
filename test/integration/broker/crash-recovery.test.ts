import { describe, expect, it } from 'vitest';
import { kafka } from '../../conformance/helpers/kafkajs.ts';
import { consumeAll } from '../../conformance/helpers/kcat.ts';
import { useBrokerProcess } from '../../helpers/broker.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';

describe('a broker killed with SIGKILL during a produce stream (flush.messages=1)', () => {
  it('serves every acknowledged record after restart, and nothing corrupt', async () => {
    const dataDir = useTmpDir('broker-crash-');
    const first = await useBrokerProcess(dataDir, {
      'log.flush.interval.messages': 1,
      'num.partitions': 2,
    });
    const producer = kafka(first.bootstrap, { retry: { retries: 0 } }).producer({
      allowAutoTopicCreation: true,
    });
    await producer.connect();
    const acknowledged: string[] = [];
    let sent = 0;
    let killed = false;
    // Several sends in flight at once, so the kill lands in the middle of appends and fsyncs.
    const stream = async (lane: number) => {
      while (!killed) {
        const values = Array.from({ length: 10 }, () => `lane${lane}-${sent++}`);
        try {
          await producer.send({
            topic: 'durable',
            acks: -1,
            messages: values.map((value) => ({ key: value, value })),
          });
          acknowledged.push(...values);
        } catch {
          return;
        }
        if (acknowledged.length >= 2000 && !killed) {
          killed = true;
          first.process.signal('SIGKILL');
        }
      }
    };
    await Promise.all([stream(0), stream(1), stream(2), stream(3)]);
    await first.process.exited;
    await producer.disconnect().catch(() => {});

    const second = await useBrokerProcess(dataDir, { 'num.partitions': 2 });
    const records = await consumeAll(second.bootstrap, 'durable', ['-X', 'check.crcs=true']);
    const values = new Set(records.map((r) => r.value));
    const missing = acknowledged.filter((v) => !values.has(v));
    expect(missing).toEqual([]);
    // Offsets are dense per partition and every record is whole (key = value).
    for (const p of [0, 1]) {
      const offsets = records.filter((r) => r.partition === p).map((r) => r.offset);
      expect(offsets).toEqual(offsets.map((_, i) => i));
    }
    for (const r of records) expect(r.key).toBe(r.value);
  });
});

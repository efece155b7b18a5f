/**
 * A sink task's consumer lag (consumer-lag.ts): the end offsets are asked only when
 * metrics are scraped, at most once a second, and the lag is the end offset minus the
 * task's position, under the JMX exporter's name of Kafka's records-lag.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/connect/api/index.ts';
import { ConnectMetrics, RECORDS_LAG } from '../../../src/connect/metrics/connect-metrics.ts';
import {
  adminEndOffsets,
  ConsumerLag,
  type EndOffsets,
} from '../../../src/connect/metrics/consumer-lag.ts';
import { parsePrometheusText, sampleOf } from './prometheus-text.ts';

describe('consumer lag', () => {
  it('is the end offset minus the position per partition, asked of the broker only when scraped', async () => {
    const clock = new ManualClock(0);
    const metrics = new ConnectMetrics({ clock, processMetrics: false });
    const task = metrics.addTask({ connector: 'lake', task: 0 }, 'sink');
    const asked: string[][] = [];
    let end = 120;
    const endOffsets: EndOffsets = async (topics) => {
      asked.push([...topics]);
      return [
        { topic: 'orders', partition: 0, offset: end },
        { topic: 'orders', partition: 1, offset: 9 },
      ];
    };
    // Partition 1 has no position yet: it shows no lag.
    const positions = [{ topic: 'orders', partition: 0, offset: 100 }];
    task.sink!.lag = new ConsumerLag(
      'connector-consumer-lake-0',
      endOffsets,
      () => positions,
      clock,
    );
    expect(asked).toEqual([]);

    let f = parsePrometheusText(await metrics.scrape());
    expect(asked).toEqual([['orders']]);
    const labels = {
      connector: 'lake',
      task: '0',
      client_id: 'connector-consumer-lake-0',
      topic: 'orders',
      partition: '0',
    };
    expect(sampleOf(f, RECORDS_LAG, labels)).toBe(20);
    expect(f.get(RECORDS_LAG)!.samples).toHaveLength(1);

    // Within a second: the same end offsets, the new position.
    positions[0]!.offset = 110;
    end = 130;
    f = parsePrometheusText(await metrics.scrape());
    expect(asked).toHaveLength(1);
    expect(sampleOf(f, RECORDS_LAG, labels)).toBe(10);

    clock.advance(1000);
    f = parsePrometheusText(await metrics.scrape());
    expect(asked).toHaveLength(2);
    expect(sampleOf(f, RECORDS_LAG, labels)).toBe(20);
  });

  it('keeps the last end offsets when the broker cannot answer', async () => {
    const clock = new ManualClock(0);
    let fail = false;
    const lag = new ConsumerLag(
      'c',
      async () => {
        if (fail) throw new Error('broker away');
        return [{ topic: 't', partition: 0, offset: 5 }];
      },
      () => [{ topic: 't', partition: 0, offset: 2 }],
      clock,
    );
    await lag.refresh();
    fail = true;
    clock.advance(1000);
    await lag.refresh();
    expect([...lag.samples()]).toEqual([{ topic: 't', partition: 0, lag: 3 }]);
  });

  it("makes one request per topic per scrape for all of a worker's sink tasks", async () => {
    const clock = new ManualClock(0);
    const metrics = new ConnectMetrics({ clock, processMetrics: false });
    const requests: string[] = [];
    const endOffsets = adminEndOffsets(() => ({
      fetchTopicOffsets: async (topic: string) => {
        requests.push(topic);
        await new Promise((resolve) => setTimeout(resolve, 5));
        return [
          { partition: 0, high: '50' },
          { partition: 1, high: '70' },
        ];
      },
    }));
    for (const task of [0, 1, 2]) {
      const m = metrics.addTask({ connector: 'lake', task }, 'sink');
      const positions = [{ topic: 'orders', partition: task % 2, offset: 40 }];
      m.sink!.lag = new ConsumerLag(`c-${task}`, endOffsets, () => positions, clock);
    }
    let f = parsePrometheusText(await metrics.scrape());
    expect(requests).toEqual(['orders']);
    const lag = (task: number, partition: number) =>
      sampleOf(f, RECORDS_LAG, {
        connector: 'lake',
        task: String(task),
        client_id: `c-${task}`,
        topic: 'orders',
        partition: String(partition),
      });
    expect([lag(0, 0), lag(1, 1), lag(2, 0)]).toEqual([10, 30, 10]);
    clock.advance(1000);
    f = parsePrometheusText(await metrics.scrape());
    expect(requests).toEqual(['orders', 'orders']);
  });
});

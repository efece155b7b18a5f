/**
 * The sinks' own metrics through PluginMetrics: the Parquet sink's files and bytes
 * written, open partitions and buffered bytes (a local folder), and the BullMQ sink's
 * jobs added and removed (a real Redis). Each task gets the handle a worker gives it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  inserts,
  putWhenConnected,
  sinkConfig,
  startTask,
  taskContext,
  tombstone,
} from '../../../connectors/bullmq-sink/test/support.ts';
import { ParquetSinkTask } from '../../../connectors/parquet-sink/parquet-sink-task.ts';
import { orderRecords } from '../../../connectors/parquet-sink/test/fixtures.ts';
import { ManualClock, type SinkTaskContext } from '../../../src/connect/api/index.ts';
import { ConnectMetrics } from '../../../src/connect/metrics/connect-metrics.ts';
import { useRedis } from '../../helpers/redis.ts';
import { waitFor } from '../../helpers/wait.ts';
import { parsePrometheusText, sampleOf } from './prometheus-text.ts';

const ORDERS = 'shop.public.orders';
const task0 = { connector: 'lake', task: '0' };

describe('Parquet sink metrics', () => {
  it('count the files and bytes made durable and show the partitions open and the bytes buffered', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sink-metrics-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const metrics = new ConnectMetrics({ clock: new ManualClock(0), processMetrics: false });
    const plugin = metrics.addTask({ connector: 'lake', task: 0 }, 'sink').plugin;
    const partitions = [{ topic: ORDERS, partition: 0 }];
    const context: SinkTaskContext = {
      connectorName: 'lake',
      taskId: 0,
      clock: new ManualClock(1_700_000_000_000),
      assignment: () => partitions,
      pause: () => undefined,
      resume: () => undefined,
      requestCommit: () => undefined,
      offset: () => undefined,
      timeout: () => undefined,
      reportTrouble: () => undefined,
      pluginMetrics: () => plugin,
    };
    const task = new ParquetSinkTask();
    onTestFinished(() => task.stop());
    await task.start({ 'store.url': pathToFileURL(dir).href, 'flush.size': '10' }, context);
    await task.open(partitions);
    const scrape = async () => parsePrometheusText(await metrics.scrape());
    await task.put(orderRecords(ORDERS, 0, 0, 25));
    const f = await waitFor('two files durable', async () => {
      const f = await scrape();
      return sampleOf(f, 'parquet_sink_files_written_total', task0) === 2 ? f : undefined;
    });
    expect(f.get('parquet_sink_files_written_total')?.type).toBe('counter');
    expect(sampleOf(f, 'parquet_sink_bytes_written_total', task0)).toBeGreaterThan(0);
    // Five records wait in an open file group.
    expect(sampleOf(f, 'parquet_sink_open_partitions', task0)).toBe(1);
    expect(sampleOf(f, 'parquet_sink_buffered_bytes', task0)).toBeGreaterThan(0);
  });
});

describe('BullMQ sink metrics', () => {
  it('count the jobs added and the jobs removed by tombstones', async () => {
    const redis = await useRedis();
    const metrics = new ConnectMetrics({ clock: new ManualClock(0), processMetrics: false });
    const plugin = metrics.addTask({ connector: 'jobs', task: 0 }, 'sink').plugin;
    const task = await startTask(
      sinkConfig(redis, { 'job.id': 'key', 'behavior.on.null.values': 'delete' }),
      {
        ...taskContext(),
        pluginMetrics: () => plugin,
      },
    );
    await putWhenConnected(task, inserts(0, 3));
    // A tombstone removes the waiting job of its key.
    await task.put([tombstone(3, 1)]);
    const f = parsePrometheusText(await metrics.scrape());
    const labels = { connector: 'jobs', task: '0' };
    expect(sampleOf(f, 'bullmq_sink_jobs_added_total', labels)).toBe(3);
    expect(sampleOf(f, 'bullmq_sink_jobs_removed_total', labels)).toBe(1);
  });
});

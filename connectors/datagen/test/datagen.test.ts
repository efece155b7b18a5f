import { afterEach, describe, expect, it } from 'vitest';
import {
  ManualClock,
  noopPluginMetrics,
  type OffsetStorageReader,
  parseConfig,
  type SourceOffset,
  type SourcePartition,
  type SourceRecord,
  validateValue,
} from '../../../src/connect/api/index.ts';
import { datagenConfigDefs } from '../datagen-config.ts';
import { DatagenConnector } from '../datagen-connector.ts';
import { DatagenTask } from '../datagen-task.ts';

/** Committed offsets kept in memory, matched by value as the real offset store does. */
class MemoryOffsets implements OffsetStorageReader {
  readonly committed = new Map<string, SourceOffset>();
  commit(records: readonly SourceRecord[]): void {
    for (const r of records) this.committed.set(JSON.stringify(r.sourcePartition), r.sourceOffset);
  }
  async offset(partition: SourcePartition): Promise<SourceOffset | null> {
    return this.committed.get(JSON.stringify(partition)) ?? null;
  }
  async offsets(
    partitions: readonly SourcePartition[],
  ): Promise<Map<SourcePartition, SourceOffset>> {
    const out = new Map<SourcePartition, SourceOffset>();
    for (const p of partitions) {
      const o = this.committed.get(JSON.stringify(p));
      if (o) out.set(p, o);
    }
    return out;
  }
}

const running: DatagenTask[] = [];
afterEach(() => {
  for (const t of running.splice(0)) t.stop();
});

async function startTasks(
  config: Record<string, string>,
  maxTasks: number,
  offsets = new MemoryOffsets(),
  clock = new ManualClock(5000),
): Promise<DatagenTask[]> {
  const connector = new DatagenConnector();
  connector.start(config);
  const tasks = [];
  for (const [taskId, taskConfig] of connector.taskConfigs(maxTasks).entries()) {
    const task = new DatagenTask();
    running.push(task);
    await task.start(taskConfig, {
      connectorName: 'gen',
      taskId,
      offsetStorageReader: offsets,
      clock,
      reportTrouble: () => undefined,
      pluginMetrics: () => noopPluginMetrics,
      transactionContext: null,
      topicCreationOverride: () => undefined,
    });
    tasks.push(task);
  }
  return tasks;
}

describe('Datagen', () => {
  it('splits a bounded sequence over tasks.max tasks, each number produced once', async () => {
    const tasks = await startTasks(
      { topic: 'gen', iterations: '10', 'records.per.second': '0' },
      3,
    );
    const seqs: number[] = [];
    for (const t of tasks) {
      for (const r of (await t.poll()) ?? []) seqs.push((r.value as { seq: number }).seq);
    }
    expect(seqs.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const idle = tasks[0].poll();
    tasks[0].stop();
    expect(await idle).toBeNull();
  });

  it('produces typed records that match the declared schema, with cycling keys and sized payloads', async () => {
    const [task] = await startTasks(
      {
        topic: 'gen',
        'records.per.second': '0',
        'key.cardinality': '3',
        'record.size': '1024',
        'batch.size': '5',
      },
      1,
    );
    const records = (await task.poll())!;
    expect(records.map((r) => r.key)).toEqual(['key-0', 'key-1', 'key-2', 'key-0', 'key-1']);
    for (const r of records) {
      validateValue(r.valueSchema!, r.value);
      expect((r.value as { payload: string }).payload).toHaveLength(1024);
      expect(r).toMatchObject({ topic: 'gen', timestamp: 5000 });
    }
  });

  it('limits the rate by the clock and wakes a waiting poll on stop', async () => {
    const clock = new ManualClock(0);
    const [task] = await startTasks(
      { topic: 'gen', 'records.per.second': '10' },
      1,
      new MemoryOffsets(),
      clock,
    );
    expect((await task.poll())?.length).toBe(1);
    clock.advance(1000);
    expect((await task.poll())?.length).toBe(10);
    clock.advance(250);
    expect((await task.poll())?.length).toBe(2);
    const waiting = task.poll();
    task.stop();
    expect(await waiting).toBeNull();
  });

  it('resumes the sequence after a restart from the committed offset', async () => {
    const offsets = new MemoryOffsets();
    const config = { topic: 'gen', 'records.per.second': '0', 'batch.size': '4' };
    const [first, second] = await startTasks(config, 2, offsets);
    const a = (await first.poll())!;
    const b = (await second.poll())!;
    offsets.commit([...a, ...b]);
    first.stop();
    second.stop();
    const restarted = await startTasks(config, 2, offsets);
    const next = (await restarted[0].poll())!;
    expect(a.map((r) => r.sourceOffset.seq)).toEqual([0, 2, 4, 6]);
    expect(next.map((r) => r.sourceOffset.seq)).toEqual([8, 10, 12, 14]);
    expect(next[0].sourcePartition).toEqual({ task: 0, tasks: 2 });
  });

  it("accepts Confluent's kafka.topic and reports a missing topic on the topic key", () => {
    const connector = new DatagenConnector();
    const parsed = (raw: Record<string, string>) => parseConfig(datagenConfigDefs, raw).values;
    expect(connector.validate(parsed({ 'kafka.topic': 'x' }))).toEqual([]);
    expect(connector.validate(parsed({})).map((e) => e.key)).toEqual(['topic']);
  });
});

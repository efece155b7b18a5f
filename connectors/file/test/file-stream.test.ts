import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ConfigException,
  loadManifests,
  ManualClock,
  noopPluginMetrics,
  type OffsetStorageReader,
  pluginNames,
  type SinkRecord,
  type SourceOffset,
  type SourcePartition,
  type SourceRecord,
  type SourceTaskContext,
} from '../../../src/connect/api/index.ts';
import { FileStreamSinkTask } from '../file-stream-sink-task.ts';
import { FileStreamSourceConnector } from '../file-stream-source-connector.ts';
import { FileStreamSourceTask } from '../file-stream-source-task.ts';
import * as plugin from '../index.ts';

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

let dir: string;
const tasks: Array<{ stop(): unknown }> = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'file-connector-'));
});

afterEach(async () => {
  for (const t of tasks.splice(0)) await t.stop();
  await rm(dir, { recursive: true, force: true });
});

function context(offsets: MemoryOffsets, clock = new ManualClock(1000)): SourceTaskContext {
  return {
    connectorName: 'file-source',
    taskId: 0,
    offsetStorageReader: offsets,
    clock,
    reportTrouble: () => undefined,
    pluginMetrics: () => noopPluginMetrics,
    transactionContext: null,
    topicCreationOverride: () => undefined,
  };
}

async function startSource(
  config: Record<string, string>,
  offsets = new MemoryOffsets(),
): Promise<FileStreamSourceTask> {
  const task = new FileStreamSourceTask();
  tasks.push(task);
  await task.start(config, context(offsets));
  return task;
}

describe('FileStreamSourceTask', () => {
  it("produces each line with Kafka's {filename} partition and {position} offset", async () => {
    const file = join(dir, 'in.txt');
    await writeFile(file, 'alpha\nbeta\n');
    const task = await startSource({ file, topic: 'lines' });
    const records = await task.poll();
    expect(records).toEqual([
      {
        topic: 'lines',
        sourcePartition: { filename: file },
        sourceOffset: { position: 6 },
        valueSchema: { type: 'string', optional: false },
        value: 'alpha',
        timestamp: 1000,
      },
      expect.objectContaining({ value: 'beta', sourceOffset: { position: 11 } }),
    ]);
  });

  it('resumes after a restart at the committed position, without duplicating lines', async () => {
    const file = join(dir, 'in.txt');
    await writeFile(file, 'one\ntwo\nthree\n');
    const offsets = new MemoryOffsets();
    const first = await startSource({ file, topic: 't', 'batch.size': '2' }, offsets);
    const batch = (await first.poll())!;
    expect(batch.map((r) => r.value)).toEqual(['one', 'two']);
    offsets.commit(batch);
    await first.stop();

    await appendFile(file, 'four\n');
    const second = await startSource({ file, topic: 't' }, offsets);
    expect((await second.poll())?.map((r) => r.value)).toEqual(['three', 'four']);
  });

  it('holds back an unterminated line until its terminator arrives, and accepts CRLF', async () => {
    const file = join(dir, 'in.txt');
    await writeFile(file, 'dos\r\nhalf');
    const task = await startSource({ file, topic: 't' });
    expect((await task.poll())?.map((r) => [r.value, r.sourceOffset])).toEqual([
      ['dos', { position: 5 }],
    ]);
    await appendFile(file, '-done\nzoë\n');
    expect((await task.poll())?.map((r) => [r.value, r.sourceOffset])).toEqual([
      ['half-done', { position: 15 }],
      ['zoë', { position: 20 }],
    ]);
  });

  it('wakes a waiting poll when lines are appended', async () => {
    const file = join(dir, 'in.txt');
    await writeFile(file, '');
    const task = await startSource({ file, topic: 't' });
    const pending = task.poll();
    await appendFile(file, 'late\n');
    expect((await pending)?.map((r) => r.value)).toEqual(['late']);
  });

  it('settles a pending poll at once when stopped, also while the file does not exist', async () => {
    const task = await startSource({ file: join(dir, 'missing.txt'), topic: 't' });
    const pending = task.poll();
    await task.stop();
    expect(await pending).toBeNull();
    expect(await task.poll()).toBeNull();
  });

  it('refuses a comma-separated topic and a missing file key', () => {
    const connector = new FileStreamSourceConnector();
    expect(() => connector.start({ file: 'x', topic: 'a,b' })).toThrow(/single topic/);
    expect(() => connector.start({ topic: 'a' })).toThrow(ConfigException);
  });
});

function sinkRecord(value: unknown, offset: number): SinkRecord {
  return {
    topic: 'lines',
    kafkaPartition: 0,
    kafkaOffset: offset,
    timestampType: 'CreateTime',
    value,
  };
}

describe('FileStreamSinkTask', () => {
  it('appends one line per record and returns the offsets once they are synced', async () => {
    const file = join(dir, 'out.txt');
    await writeFile(file, 'existing\n');
    const task = new FileStreamSinkTask();
    tasks.push(task);
    await task.start({ file });
    await task.put([
      sinkRecord('a', 0),
      sinkRecord(42, 1),
      sinkRecord(null, 2),
      sinkRecord({ k: 1n }, 3),
    ]);
    const offsets = [{ topic: 'lines', partition: 0, offset: 4 }];
    expect(await task.preCommit(offsets)).toEqual(offsets);
    expect(await readFile(file, 'utf8')).toBe('existing\na\n42\nnull\n{"k":"1"}\n');
  });

  it('copies a file line for line through source and sink', async () => {
    const input = join(dir, 'in.txt');
    const output = join(dir, 'out.txt');
    const lines = Array.from({ length: 250 }, (_, i) => `line ${i} ${'é'.repeat(i % 7)}`);
    await writeFile(input, `${lines.join('\n')}\n`);
    const source = await startSource({ file: input, topic: 't', 'batch.size': '100' });
    const sink = new FileStreamSinkTask();
    tasks.push(sink);
    await sink.start({ file: output });
    let offset = 0;
    for (let copied = 0; copied < lines.length; ) {
      const batch = (await source.poll()) ?? [];
      await sink.put(batch.map((r) => sinkRecord(r.value, offset++)));
      copied += batch.length;
    }
    await sink.preCommit([{ topic: 't', partition: 0, offset }]);
    expect(await readFile(output, 'utf8')).toBe(await readFile(input, 'utf8'));
  });
});

describe('file plugin folder', () => {
  it("exposes both connectors under Kafka's class names", () => {
    const manifests = loadManifests(plugin, 'connectors/file');
    expect(manifests.flatMap(pluginNames)).toEqual(
      expect.arrayContaining([
        'org.apache.kafka.connect.file.FileStreamSourceConnector',
        'org.apache.kafka.connect.file.FileStreamSinkConnector',
        'FileStreamSource',
        'FileStreamSink',
      ]),
    );
  });
});

import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../../helpers/broker.ts';
import { readRecords } from '../../helpers/read-records.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import { fileLines, rest, useStandalone, waitFor, workerConfig } from './standalone-helpers.ts';

let broker: TestBroker;

beforeAll(async () => {
  broker = await startTestBroker();
});

afterAll(async () => {
  await broker?.stop();
});

function lines(from: number, to: number): string[] {
  return Array.from({ length: to - from + 1 }, (_, i) => `line ${from + i}`);
}

function source(file: string, topic: string, name = 'file-source') {
  return {
    name,
    config: { 'connector.class': 'FileStreamSource', 'tasks.max': '1', file, topic },
  };
}

function sink(file: string, topic: string, name = 'file-sink') {
  return {
    name,
    config: {
      'connector.class': 'org.apache.kafka.connect.file.FileStreamSinkConnector',
      'tasks.max': '1',
      file,
      topics: topic,
    },
  };
}

/** Every value in the topic, read from the start with a plain kafkajs consumer. */
async function topicValues(topic: string, expected: number): Promise<string[]> {
  return (await readRecords(broker.bootstrap, topic, expected)).map((r) => r.value);
}

describe('standalone mode with the file connectors', () => {
  it('a file source writes each line of its file to the topic, in order', async () => {
    const dir = useTmpDir();
    const input = join(dir, 'input.txt');
    writeFileSync(input, `${lines(1, 50).join('\n')}\n`);
    const worker = await useStandalone(workerConfig(broker.bootstrap, dir), [
      source(input, 'lines-a'),
    ]);
    expect(await topicValues('lines-a', 50)).toEqual(lines(1, 50));
    const status = await rest(worker, 'GET', '/connectors/file-source/status');
    expect(status.body).toMatchObject({
      name: 'file-source',
      connector: { state: 'RUNNING', worker_id: expect.stringMatching(/:\d+$/) },
      tasks: [{ id: 0, state: 'RUNNING' }],
      type: 'source',
    });
  });

  it('a file sink writes the lines out, and a restart neither loses nor repeats a line', async () => {
    const dir = useTmpDir();
    const input = join(dir, 'input.txt');
    const output = join(dir, 'output.txt');
    writeFileSync(input, `${lines(1, 100).join('\n')}\n`);
    const config = workerConfig(broker.bootstrap, dir);
    const first = await useStandalone(config, [source(input, 'lines-b'), sink(output, 'lines-b')]);
    await waitFor('100 lines written out', () =>
      fileLines(output).length >= 100 ? true : undefined,
    );
    await first.stop();

    appendFileSync(input, `${lines(101, 150).join('\n')}\n`);
    const second = await useStandalone(config, [source(input, 'lines-b'), sink(output, 'lines-b')]);
    await waitFor('150 lines written out', () =>
      fileLines(output).length >= 150 ? true : undefined,
    );
    // Whatever is still in flight must not add duplicates once both sides are idle.
    await second.stop();
    expect(fileLines(output)).toEqual(lines(1, 150));
    const offsets = JSON.parse(
      (await import('node:fs')).readFileSync(join(dir, 'connect.offsets'), 'utf8'),
    );
    expect(offsets.offsets).toEqual([
      [
        `["file-source",{"filename":${JSON.stringify(input)}}]`,
        expect.stringMatching(/^\{"position":\d+\}$/),
      ],
    ]);
  });

  it('pause stops delivery, resume continues it, stop removes the tasks and allows offset changes', async () => {
    const dir = useTmpDir();
    const input = join(dir, 'input.txt');
    const output = join(dir, 'output.txt');
    writeFileSync(input, `${lines(1, 10).join('\n')}\n`);
    const worker = await useStandalone(workerConfig(broker.bootstrap, dir), [
      source(input, 'lines-c'),
      sink(output, 'lines-c', 'file-sink-c'),
    ]);
    await waitFor('10 lines written out', () =>
      fileLines(output).length >= 10 ? true : undefined,
    );

    expect((await rest(worker, 'PUT', '/connectors/file-source/pause')).status).toBe(202);
    await waitFor('source paused', async () => {
      const s = (await rest(worker, 'GET', '/connectors/file-source/status')).body;
      return s.connector.state === 'PAUSED' && s.tasks[0]?.state === 'PAUSED' ? true : undefined;
    });
    appendFileSync(input, `${lines(11, 20).join('\n')}\n`);
    expect((await rest(worker, 'PUT', '/connectors/file-source/resume')).status).toBe(202);
    await waitFor('20 lines written out', () =>
      fileLines(output).length >= 20 ? true : undefined,
    );

    const alterWhileRunning = await rest(worker, 'PATCH', '/connectors/file-source/offsets', {
      offsets: [{ partition: { filename: input }, offset: { position: 0 } }],
    });
    expect(alterWhileRunning.status).toBe(400);
    expect(alterWhileRunning.body.message).toMatch(/must be in the STOPPED state/);

    expect((await rest(worker, 'PUT', '/connectors/file-source/stop')).status).toBe(204);
    const stopped = (await rest(worker, 'GET', '/connectors/file-source/status')).body;
    expect(stopped.connector.state).toBe('STOPPED');
    expect(stopped.tasks).toEqual([]);
    const offsets = (await rest(worker, 'GET', '/connectors/file-source/offsets')).body;
    expect(offsets.offsets).toHaveLength(1);
    expect(offsets.offsets[0].partition).toEqual({ filename: input });

    // Rewind to the start of line 16 and resume: lines 16..20 are delivered again.
    const position = Buffer.byteLength(`${lines(1, 15).join('\n')}\n`);
    const altered = await rest(worker, 'PATCH', '/connectors/file-source/offsets', {
      offsets: [{ partition: { filename: input }, offset: { position } }],
    });
    expect(altered.status).toBe(200);
    expect((await rest(worker, 'PUT', '/connectors/file-source/resume')).status).toBe(202);
    await waitFor('lines 16..20 again', () => (fileLines(output).length >= 25 ? true : undefined));
    expect(fileLines(output)).toEqual([...lines(1, 20), ...lines(16, 20)]);

    await waitFor('sink offsets committed', async () => {
      const o = (await rest(worker, 'GET', '/connectors/file-sink-c/offsets')).body;
      if (o.offsets[0]?.offset.kafka_offset === 25) return true;
      throw new Error(JSON.stringify(o));
    });
    const sinkOffsets = (await rest(worker, 'GET', '/connectors/file-sink-c/offsets')).body;
    expect(sinkOffsets.offsets).toEqual([
      { partition: { kafka_topic: 'lines-c', kafka_partition: 0 }, offset: { kafka_offset: 25 } },
    ]);
  });

  it('a file sink on topics.regex reads every existing topic that matches', async () => {
    const kafka = new Kafka({ brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
    const producer = kafka.producer();
    await producer.connect();
    try {
      await producer.send({ topic: 'regex-1', messages: [{ value: 'one' }] });
      await producer.send({ topic: 'regex-2', messages: [{ value: 'two' }] });
      await producer.send({ topic: 'other-3', messages: [{ value: 'three' }] });
    } finally {
      await producer.disconnect();
    }
    const dir = useTmpDir();
    const output = join(dir, 'output.txt');
    await useStandalone(workerConfig(broker.bootstrap, dir), [
      {
        name: 'regex-sink',
        config: { 'connector.class': 'FileStreamSink', file: output, 'topics.regex': 'regex-\\d' },
      },
    ]);
    await waitFor('both topics written out', () =>
      fileLines(output).length >= 2 ? true : undefined,
    );
    expect(fileLines(output).sort()).toEqual(['one', 'two']);
  });
});

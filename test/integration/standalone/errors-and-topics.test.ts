import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../../helpers/broker.ts';
import { readRecords } from '../../helpers/read-records.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import { fileLines, rest, useStandalone, waitFor, workerConfig } from './standalone-helpers.ts';

let broker: TestBroker;
let kafka: Kafka;

beforeAll(async () => {
  broker = await startTestBroker();
  kafka = new Kafka({ brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
});

afterAll(async () => {
  await broker?.stop();
});

async function produce(topic: string, values: string[]): Promise<void> {
  const producer = kafka.producer();
  await producer.connect();
  try {
    await producer.send({
      topic,
      messages: values.map((value) => ({ value, headers: { origin: 'test' } })),
    });
  } finally {
    await producer.disconnect();
  }
}

const readAll = (topic: string, expected: number) => readRecords(broker.bootstrap, topic, expected);

describe('error handling in sink tasks', () => {
  it('with errors.tolerance=all a record that fails conversion goes to the dead letter queue with its context, and the rest is written', async () => {
    const dir = useTmpDir();
    const output = join(dir, 'out.txt');
    await produce('json-in', ['{"n":1}', '{not json', '{"n":3}']);
    const worker = await useStandalone(
      workerConfig(broker.bootstrap, dir, {
        'value.converter': 'org.apache.kafka.connect.json.JsonConverter',
        'value.converter.schemas.enable': 'false',
      }),
      [
        {
          name: 'tolerant-sink',
          config: {
            'connector.class': 'FileStreamSink',
            topics: 'json-in',
            file: output,
            'errors.tolerance': 'all',
            'errors.log.enable': 'true',
            'errors.deadletterqueue.topic.name': 'json-dlq',
            'errors.deadletterqueue.context.headers.enable': 'true',
          },
        },
      ],
    );
    await waitFor('two good records written', () =>
      fileLines(output).length >= 2 ? true : undefined,
    );
    expect(fileLines(output)).toEqual(['{"n":1}', '{"n":3}']);
    const [dead] = await readAll('json-dlq', 1);
    expect(dead?.value).toBe('{not json');
    expect(dead?.headers).toMatchObject({
      origin: 'test',
      '__connect.errors.topic': 'json-in',
      '__connect.errors.partition': '0',
      '__connect.errors.offset': '1',
      '__connect.errors.connector.name': 'tolerant-sink',
      '__connect.errors.task.id': '0',
      '__connect.errors.stage': 'VALUE_CONVERTER',
      '__connect.errors.exception.class.name': 'DataException',
    });
    const status = (await rest(worker, 'GET', '/connectors/tolerant-sink/status')).body;
    expect(status.tasks[0].state).toBe('RUNNING');
  });

  it('with errors.tolerance=none a record that fails conversion fails the task with its trace', async () => {
    const dir = useTmpDir();
    await produce('json-strict', ['{broken']);
    const worker = await useStandalone(
      workerConfig(broker.bootstrap, dir, {
        'value.converter': 'org.apache.kafka.connect.json.JsonConverter',
        'value.converter.schemas.enable': 'false',
      }),
      [
        {
          name: 'strict-sink',
          config: {
            'connector.class': 'FileStreamSink',
            topics: 'json-strict',
            file: join(dir, 'out.txt'),
          },
        },
      ],
    );
    const task = await waitFor('the task to fail', async () => {
      const s = (await rest(worker, 'GET', '/connectors/strict-sink/tasks/0/status')).body;
      return s.state === 'FAILED' ? s : undefined;
    });
    expect(task.trace).toContain('Tolerance exceeded in error handler');
    expect(task.trace).toContain('VALUE_CONVERTER');

    // Restarting failed instances only brings the task back (it fails again on the same record).
    const restart = await rest(
      worker,
      'POST',
      '/connectors/strict-sink/restart?includeTasks=true&onlyFailed=true',
    );
    expect(restart.status).toBe(202);
    expect(restart.body.tasks[0].state).toBe('RESTARTING');
    expect(restart.body.connector.state).toBe('RUNNING');
  });
});

describe('source topics', () => {
  it('creates a missing topic with the topic.creation.* settings before the first record', async () => {
    const dir = useTmpDir();
    const worker = await useStandalone(workerConfig(broker.bootstrap, dir), [
      {
        name: 'gen',
        config: {
          'connector.class': 'connect.datagen.DatagenConnector',
          'kafka.topic': 'generated',
          'topic.creation.default.partitions': '3',
          'topic.creation.default.replication.factor': '-1',
          'topic.creation.default.cleanup.policy': 'compact',
        },
      },
    ]);
    const admin = kafka.admin();
    await admin.connect();
    try {
      const meta = await waitFor('the topic to exist', async () => {
        const topics = await admin.listTopics();
        return topics.includes('generated')
          ? await admin.fetchTopicMetadata({ topics: ['generated'] })
          : undefined;
      });
      expect(meta.topics[0]?.partitions).toHaveLength(3);
      const described = await admin.describeConfigs({
        includeSynonyms: false,
        resources: [{ type: 2, name: 'generated', configNames: ['cleanup.policy'] }],
      });
      expect(
        described.resources[0]?.configEntries.find((e) => e.configName === 'cleanup.policy')
          ?.configValue,
      ).toBe('compact');
    } finally {
      await admin.disconnect();
    }
    const topics = await waitFor('the topic listed as active', async () => {
      const t = (await rest(worker, 'GET', '/connectors/gen/topics')).body;
      return t.gen.topics.length > 0 ? t : undefined;
    });
    expect(topics).toEqual({ gen: { topics: ['generated'] } });
  });

  it('compresses record batches with the compression.type a connector overrides', async () => {
    const dir = useTmpDir();
    await useStandalone(workerConfig(broker.bootstrap, dir), [
      {
        name: 'gen-lz4',
        config: {
          'connector.class': 'connect.datagen.DatagenConnector',
          'kafka.topic': 'gen-lz4',
          iterations: '20',
          'records.per.second': '0',
          'producer.override.compression.type': 'lz4',
        },
      },
    ]);
    const values = await readAll('gen-lz4', 20);
    expect(values).toHaveLength(20);
    // The first batch's attributes (bytes 21-22 of the segment) name the codec: 3 = lz4.
    const segment = readFileSync(join(broker.dataDir, 'gen-lz4-0', '00000000000000000000.log'));
    expect(segment.readInt16BE(21) & 0x7).toBe(3);
  });

  it('deleting a connector stops its tasks and forgets it', async () => {
    const dir = useTmpDir();
    const worker = await useStandalone(workerConfig(broker.bootstrap, dir), [
      {
        name: 'gen-del',
        config: { 'connector.class': 'connect.datagen.DatagenConnector', 'kafka.topic': 'gen-del' },
      },
    ]);
    await waitFor('running', async () => {
      const s = (await rest(worker, 'GET', '/connectors/gen-del/status')).body;
      return s.tasks[0]?.state === 'RUNNING' ? true : undefined;
    });
    expect((await rest(worker, 'DELETE', '/connectors/gen-del')).status).toBe(204);
    expect((await rest(worker, 'GET', '/connectors/gen-del/status')).status).toBe(404);
    expect(worker.worker.taskIds()).toEqual([]);
    expect((await rest(worker, 'GET', '/connectors')).body).toEqual([]);
  });
});

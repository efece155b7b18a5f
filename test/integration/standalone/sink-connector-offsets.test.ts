/**
 * PATCH|DELETE /connectors/{name}/offsets of a sink connector against a real broker:
 * a refused or failed request leaves the consumer group `connect-<name>` as it found
 * it (no member joined and left behind), so the next request succeeds at once
 * instead of waiting out a session timeout.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Admin, Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../../helpers/broker.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import { rest, useStandalone, waitFor, workerConfig } from './standalone-helpers.ts';

let broker: TestBroker;
let admin: Admin;

beforeAll(async () => {
  broker = await startTestBroker();
  const kafka = new Kafka({ brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
  admin = kafka.admin();
  await admin.connect();
  const producer = kafka.producer();
  await producer.connect();
  try {
    for (const topic of ['offsets-a', 'offsets-b']) {
      await producer.send({
        topic,
        messages: Array.from({ length: 5 }, (_, i) => ({ value: `line ${i + 1}` })),
      });
    }
  } finally {
    await producer.disconnect();
  }
});

afterAll(async () => {
  await admin?.disconnect();
  await broker?.stop();
});

/** The members of the connector's consumer group, as kafka-consumer-groups shows them. */
async function groupMembers(connector: string): Promise<string[]> {
  const { groups } = await admin.describeGroups([`connect-${connector}`]);
  return groups[0]!.members.map((m) => m.memberId);
}

/** A file sink on `topic` that has consumed all 5 records, then STOPPED. */
async function stoppedSink(name: string, topic: string) {
  const dir = useTmpDir();
  writeFileSync(join(dir, 'out.txt'), '');
  const worker = await useStandalone(workerConfig(broker.bootstrap, dir), [
    {
      name,
      config: { 'connector.class': 'FileStreamSink', file: join(dir, 'out.txt'), topics: topic },
    },
  ]);
  await waitFor('the sink committed offset 5', async () => {
    const o = (await rest(worker, 'GET', `/connectors/${name}/offsets`)).body;
    return o.offsets[0]?.offset.kafka_offset === 5 ? true : undefined;
  });
  expect((await rest(worker, 'PUT', `/connectors/${name}/stop`)).status).toBe(204);
  await waitFor('the sink STOPPED with no tasks', async () => {
    const s = (await rest(worker, 'GET', `/connectors/${name}/status`)).body;
    return s.connector.state === 'STOPPED' && s.tasks.length === 0 ? true : undefined;
  });
  expect(await groupMembers(name)).toEqual([]);
  return worker;
}

const partition = (topic: string, p = 0) => ({ kafka_topic: topic, kafka_partition: p });

describe('sink connector offsets over REST', () => {
  it('a negative kafka_offset is 400 and leaves the group empty: the next PATCH and DELETE succeed at once', async () => {
    const worker = await stoppedSink('neg-sink', 'offsets-a');

    // -1 and -2 are kafkajs's "latest" and "earliest" seek markers, not offsets.
    for (const kafkaOffset of [-5, -1, -2]) {
      const refused = await rest(worker, 'PATCH', '/connectors/neg-sink/offsets', {
        offsets: [{ partition: partition('offsets-a'), offset: { kafka_offset: kafkaOffset } }],
      });
      expect(refused).toEqual({
        status: 400,
        body: {
          error_code: 400,
          message: `Invalid Kafka offset value in the provided offsets: '${kafkaOffset}'. Offset values for sink connectors need to be non-negative integers.`,
        },
      });
      expect(await groupMembers('neg-sink')).toEqual([]);
    }
    expect((await rest(worker, 'GET', '/connectors/neg-sink/offsets')).body).toEqual({
      offsets: [{ partition: partition('offsets-a'), offset: { kafka_offset: 5 } }],
    });

    const altered = await rest(worker, 'PATCH', '/connectors/neg-sink/offsets', {
      offsets: [{ partition: partition('offsets-a'), offset: { kafka_offset: 2 } }],
    });
    expect(altered.status).toBe(200);
    expect(altered.body.message).toMatch(/altered successfully/);
    expect((await rest(worker, 'GET', '/connectors/neg-sink/offsets')).body).toEqual({
      offsets: [{ partition: partition('offsets-a'), offset: { kafka_offset: 2 } }],
    });
    expect(await groupMembers('neg-sink')).toEqual([]);

    const reset = await rest(worker, 'DELETE', '/connectors/neg-sink/offsets');
    expect(reset.status).toBe(200);
    expect(reset.body.message).toMatch(/reset successfully/);
    expect((await rest(worker, 'GET', '/connectors/neg-sink/offsets')).body).toEqual({
      offsets: [],
    });
  });

  it('a PATCH that fails in the write (unknown topic) leaves the group empty and the next one succeeds', async () => {
    const worker = await stoppedSink('unknown-topic-sink', 'offsets-b');

    const failed = await rest(worker, 'PATCH', '/connectors/unknown-topic-sink/offsets', {
      offsets: [{ partition: partition('no-such-topic'), offset: { kafka_offset: 3 } }],
    });
    expect(failed.status).toBe(500);
    expect(failed.body.error_code).toBe(500);
    expect(failed.body.message).toMatch(
      /^Failed to alter consumer group offsets for connector unknown-topic-sink/,
    );
    expect(await groupMembers('unknown-topic-sink')).toEqual([]);

    const altered = await rest(worker, 'PATCH', '/connectors/unknown-topic-sink/offsets', {
      offsets: [{ partition: partition('offsets-b'), offset: { kafka_offset: 1 } }],
    });
    expect(altered.status).toBe(200);
    expect((await rest(worker, 'GET', '/connectors/unknown-topic-sink/offsets')).body).toEqual({
      offsets: [{ partition: partition('offsets-b'), offset: { kafka_offset: 1 } }],
    });
    expect((await rest(worker, 'DELETE', '/connectors/unknown-topic-sink/offsets')).status).toBe(
      200,
    );
    expect(await groupMembers('unknown-topic-sink')).toEqual([]);
  });
});

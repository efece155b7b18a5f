/**
 * The broker reuses request frames (socket-server.ts, util/buffer-pool.ts): these check, end to
 * end, that nothing it keeps from a request is overwritten by the requests after it.
 */
import { describe, expect, it } from 'vitest';
import { ApiKey } from '../../../../src/protocol/api-keys.ts';
import type { Message } from '../../../../src/protocol/codec.ts';
import {
  batchLastOffset,
  decodeRecords,
  encodeBatch,
  iterateBatches,
} from '../../../../src/protocol/record-batch.ts';
import { fetchPartition, pseudoRandom, type RawClient, useRawBroker } from './raw-client.ts';

// flush.messages=1: each answer waits for an fsync, so many frames are held at once.
const { client } = useRawBroker({ config: { 'log.flush.interval.messages': 1 } });

const produceBody = (topic: string, partition: number, records: Buffer, acks: number): Message => ({
  transactionalId: null,
  acks,
  timeoutMs: 5000,
  topicData: [{ name: topic, partitionData: [{ index: partition, records }] }],
});

async function createTopic(c: RawClient, name: string, partitions: number): Promise<void> {
  const res = await c.request(ApiKey.CreateTopics, 4, {
    topics: [
      { name, numPartitions: partitions, replicationFactor: -1, assignments: [], configs: [] },
    ],
    timeoutMs: 5000,
    validateOnly: false,
  });
  expect(res.topics[0].errorCode).toBe(0);
}

/** Every record value of a partition, in offset order, read back with Fetch. */
async function readValues(c: RawClient, topic: string, partition: number): Promise<Buffer[]> {
  const values: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const res = await fetchPartition(c, topic, partition, offset, {
      maxBytes: 4 << 20,
      isolationLevel: 0,
    });
    const p = res.responses[0].partitions[0];
    expect(p.errorCode).toBe(0);
    const records = p.records as Buffer | null;
    if (records === null || records.length === 0) return values;
    // Checks every CRC on the way.
    for (const { position } of iterateBatches(records, 0, records.length, true)) {
      for (const r of decodeRecords(records, position)) values.push(r.value!);
      offset = batchLastOffset(records, position) + 1;
    }
  }
}

describe('request frame reuse', () => {
  it('stores byte for byte many pipelined Produce requests of varied sizes, acks=0 among them', async () => {
    const c = await client();
    await createTopic(c, 'reuse', 2);
    const sent: Buffer[][] = [[], []];
    const answers: Array<Promise<Message>> = [];
    for (let i = 0; i < 60; i++) {
      const partition = i % 2;
      // From a few hundred bytes to ~900 KB: many requests span several socket reads.
      const valueBytes = ((i * 7919) % 30) * 1000 + 100;
      const values = Array.from({ length: 30 }, (_, j) => pseudoRandom(i * 100 + j, valueBytes));
      sent[partition]!.push(...values);
      const records = encodeBatch({
        records: values.map((value, j) => ({ timestamp: 1000 + j, key: null, value })),
      });
      const body = produceBody('reuse', partition, records, i % 5 === 4 ? 0 : 1);
      if (body.acks === 0) c.send(ApiKey.Produce, 7, body);
      else answers.push(c.request(ApiKey.Produce, 7, body));
    }
    for (const res of await Promise.all(answers)) {
      expect(res.responses[0].partitionResponses[0].errorCode).toBe(0);
    }
    for (const partition of [0, 1]) {
      const stored = await readValues(c, 'reuse', partition);
      expect(stored.length).toBe(sent[partition]!.length);
      stored.forEach((value, i) => {
        expect(value.equals(sent[partition]![i]!)).toBe(true);
      });
    }
  });

  it("keeps a group member's metadata and assignment intact through later Produce traffic on its connection", async () => {
    const c = await client();
    await createTopic(c, 'reuse-group', 1);
    const metadata = pseudoRandom(1, 3000);
    const assignment = pseudoRandom(2, 2000);
    const joined = await c.request(ApiKey.JoinGroup, 3, {
      groupId: 'reuse-group',
      sessionTimeoutMs: 30_000,
      rebalanceTimeoutMs: 30_000,
      memberId: '',
      protocolType: 'consumer',
      protocols: [{ name: 'range', metadata }],
    });
    expect(joined.errorCode).toBe(0);
    const synced = await c.request(ApiKey.SyncGroup, 2, {
      groupId: 'reuse-group',
      generationId: joined.generationId,
      memberId: joined.memberId,
      assignments: [{ memberId: joined.memberId, assignment }],
    });
    expect(synced.errorCode).toBe(0);
    // Frames of the size of the group requests' frames and larger, all reused.
    const produced = Array.from({ length: 40 }, (_, i) =>
      c.request(
        ApiKey.Produce,
        7,
        produceBody(
          'reuse-group',
          0,
          encodeBatch({
            records: [{ timestamp: 1, key: null, value: pseudoRandom(100 + i, 1000 + i * 500) }],
          }),
          1,
        ),
      ),
    );
    await Promise.all(produced);
    const described = await c.request(ApiKey.DescribeGroups, 1, { groups: ['reuse-group'] });
    const member = described.groups[0].members[0];
    expect(Buffer.compare(member.memberMetadata, metadata)).toBe(0);
    expect(Buffer.compare(member.memberAssignment, assignment)).toBe(0);
  });
});

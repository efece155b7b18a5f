/**
 * Fetch answers are read into buffers the broker reuses once the socket has written
 * them (answer-buffers.ts): these check, end to end, that no answer's bytes are
 * overwritten by a later read while its write is still pending. Clients stop reading
 * for a while, so the broker's writes back up in the kernel and stay pending in
 * libuv while other fetches read.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { ApiKey } from '../../../../src/protocol/api-keys.ts';
import type { Message } from '../../../../src/protocol/codec.ts';
import {
  decodeRecords,
  encodeBatch,
  iterateBatches,
} from '../../../../src/protocol/record-batch.ts';
import { pseudoRandom, type RawClient, useRawBroker } from './raw-client.ts';

const TOPIC = 'answers';
const PARTITIONS = 3;

const { client } = useRawBroker();
let producer: RawClient;
/** The value of every record produced, by partition and offset. */
const values: Buffer[][] = Array.from({ length: PARTITIONS }, () => []);
/** Records acknowledged, by partition: fetches start below these. */
const acked = new Array<number>(PARTITIONS).fill(0);
let seed = 0;

beforeAll(async () => {
  producer = await client();
  const res = await producer.request(ApiKey.CreateTopics, 4, {
    topics: [
      {
        name: TOPIC,
        numPartitions: PARTITIONS,
        replicationFactor: -1,
        assignments: [],
        configs: [],
      },
    ],
    timeoutMs: 5000,
    validateOnly: false,
  });
  expect(res.topics[0].errorCode).toBe(0);
  // About 4 MB per partition before the first fetch, so fetches of several MB fill up.
  await Promise.all(Array.from({ length: 90 }, (_, i) => produce(i % PARTITIONS)));
});

/** One batch of 10 records (of 100 B to 27 KB unless said) to `partition`; resolves once acknowledged. */
async function produce(partition: number, valueBytes?: number): Promise<void> {
  const n = seed++;
  valueBytes ??= ((n * 7919) % 28) * 1000 + 100;
  const batch = Array.from({ length: 10 }, (_, j) => pseudoRandom(n * 10 + j, valueBytes));
  // Appends keep the order requests arrive in, and so does `values`.
  values[partition]!.push(...batch);
  const end = values[partition]!.length;
  const records = encodeBatch({
    records: batch.map((value, j) => ({ timestamp: 1000 + j, key: null, value })),
  });
  const res = await producer.request(ApiKey.Produce, 7, {
    transactionalId: null,
    acks: 1,
    timeoutMs: 5000,
    topicData: [{ name: TOPIC, partitionData: [{ index: partition, records }] }],
  });
  expect(res.responses[0].partitionResponses[0].errorCode).toBe(0);
  acked[partition] = Math.max(acked[partition]!, end);
}

function fetchRequest(
  c: RawClient,
  partitions: Array<{ partition: number; fetchOffset: number; maxBytes: number }>,
  options: {
    maxBytes?: number;
    maxWaitMs?: number;
    minBytes?: number;
    isolationLevel?: number;
  } = {},
): Promise<Message> {
  return c.request(ApiKey.Fetch, 11, {
    replicaId: -1,
    maxWaitMs: options.maxWaitMs ?? 0,
    minBytes: options.minBytes ?? 0,
    maxBytes: options.maxBytes ?? 64 << 20,
    isolationLevel: options.isolationLevel ?? 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [
      {
        topic: TOPIC,
        partitions: partitions.map((p) => ({
          partition: p.partition,
          currentLeaderEpoch: -1,
          fetchOffset: p.fetchOffset,
          logStartOffset: -1,
          partitionMaxBytes: p.maxBytes,
        })),
      },
    ],
    forgottenTopicsData: [],
    rackId: '',
  });
}

/**
 * Checks every batch CRC and every record value of a Fetch answer against what was
 * produced at that offset; returns how many records it checked.
 */
function checkAnswer(res: Message, fetchOffsets: Map<number, number>): number {
  let checked = 0;
  for (const p of res.responses[0].partitions as Message[]) {
    expect(p.errorCode).toBe(0);
    const records = p.records as Buffer | null;
    if (records === null || records.length === 0) continue;
    let first = true;
    for (const { position } of iterateBatches(records, 0, records.length, true)) {
      for (const r of decodeRecords(records, position)) {
        if (first) {
          // The answer starts with the batch holding the fetch offset.
          expect(r.offset).toBeLessThanOrEqual(fetchOffsets.get(p.partitionIndex)!);
          first = false;
        }
        const expected = values[p.partitionIndex]![r.offset];
        if (expected === undefined || !r.value!.equals(expected)) {
          throw new Error(`partition ${p.partitionIndex} offset ${r.offset}: wrong value`);
        }
        checked++;
      }
    }
  }
  return checked;
}

const PARTITION_MAX_BYTES = [40_000, 100_000, 700_000, 1 << 20, 3 << 20];

/**
 * `count` fetches pipelined on `c`, of one to three partitions each at offsets and
 * sizes drawn from `n`; with `stall`, `c` stops reading until all were sent and
 * `stall` ms passed. Resolves with the number of records checked.
 */
async function pipelinedFetches(
  c: RawClient,
  n: number,
  count: number,
  stall: number,
): Promise<number> {
  if (stall > 0) c.socket.pause();
  const answers: Array<Promise<number>> = [];
  for (let i = 0; i < count; i++) {
    const k = n * 31 + i * 7;
    const wanted = Array.from({ length: 1 + (k % PARTITIONS) }, (_, j) => {
      const partition = (k + j) % PARTITIONS;
      return {
        partition,
        fetchOffset: (k * 104_729 + j * 13) % Math.max(1, acked[partition]!),
        maxBytes: PARTITION_MAX_BYTES[(k + j) % PARTITION_MAX_BYTES.length]!,
      };
    });
    const offsets = new Map(wanted.map((w) => [w.partition, w.fetchOffset]));
    // read_committed and read_uncommitted in turn: without transactions they read alike.
    const answer = fetchRequest(c, wanted, { isolationLevel: i % 2 });
    answers.push(answer.then((res) => checkAnswer(res, offsets)));
  }
  if (stall > 0) {
    await new Promise((r) => setTimeout(r, stall));
    c.socket.resume();
  }
  const checked = await Promise.all(answers);
  return checked.reduce((a, b) => a + b, 0);
}

describe('Fetch answer buffer reuse', () => {
  it('serves byte for byte many pipelined fetches on several stalled connections while producing', async () => {
    const fetchers = await Promise.all(Array.from({ length: 3 }, () => client()));
    let checked = 0;
    for (let round = 0; round < 4; round++) {
      const producing = Promise.all(Array.from({ length: 15 }, (_, i) => produce(i % PARTITIONS)));
      const counts = await Promise.all(
        // The last connection reads as it goes: its writes mostly complete at once.
        fetchers.map((c, i) => pipelinedFetches(c, round * 10 + i, 8, i < 2 ? 150 : 0)),
      );
      await producing;
      checked += counts.reduce((a, b) => a + b, 0);
    }
    // Not a vacuous pass: most fetches carried records.
    expect(checked).toBeGreaterThan(2_000);
  });

  it('answers a long-polling fetch with the records that arrived while it waited, and the fetch queued behind it', async () => {
    const c = await client();
    const others = await Promise.all(Array.from({ length: 2 }, () => client()));
    const from = acked[0]!;
    const waiting = fetchRequest(c, [{ partition: 0, fetchOffset: from, maxBytes: 1 << 20 }], {
      maxWaitMs: 30_000,
      minBytes: 400_000,
    });
    // Read at once, answered only after the long poll: its buffers are held meanwhile.
    const queued = fetchRequest(c, [{ partition: 1, fetchOffset: 0, maxBytes: 3 << 20 }]);
    let answered = false;
    void waiting.then(() => {
      answered = true;
    });
    // 150 KB a batch: each append wakes the fetch, which reads, is still short of
    // minBytes and waits again, until the third. Meanwhile other fetches borrow buffers.
    let checked = 0;
    for (let i = 0; i < 3; i++) {
      expect(answered).toBe(false);
      await produce(0, 15_000);
      const counts = await Promise.all(
        others.map((o, j) => pipelinedFetches(o, 100 + i * 2 + j, 6, 50)),
      );
      checked += counts.reduce((a, b) => a + b, 0);
    }
    const res = await waiting;
    expect(checkAnswer(res, new Map([[0, from]]))).toBe(30);
    expect(res.responses[0].partitions[0].records.length).toBeGreaterThanOrEqual(400_000);
    expect(checkAnswer(await queued, new Map([[1, 0]]))).toBeGreaterThan(0);
    expect(checked).toBeGreaterThan(0);
  });
});

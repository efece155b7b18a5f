/**
 * The Fetch handler with the answer buffers it borrows (server/answer-buffers.ts):
 * what it gives back early, and that the answer keeps only what it still holds. The
 * buffers here are overwritten as soon as they are given back, as a reused buffer
 * would be, so an answer that still pointed into one would show it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BrokerServices } from '../../../../src/broker/handlers/broker-services.ts';
import { handleFetch } from '../../../../src/broker/handlers/fetch.ts';
import type { RequestContext } from '../../../../src/broker/handlers/handler.ts';
import { PartitionLog } from '../../../../src/broker/log/partition-log.ts';
import { segmentFileName } from '../../../../src/broker/log/segment.ts';
import { ProducerStateStore } from '../../../../src/broker/producer/producer-state-store.ts';
import type { AnswerBuffers } from '../../../../src/broker/server/answer-buffers.ts';
import type { Message } from '../../../../src/protocol/codec.ts';
import {
  decodeRecords,
  encodeBatch,
  iterateBatches,
} from '../../../../src/protocol/record-batch.ts';
import { systemClock } from '../../../../src/util/clock.ts';
import { getLogger } from '../../../../src/util/logger.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { batchOf, tempDir, topicConfig } from '../log/log-test-helpers.ts';
import { pseudoRandom } from '../server/raw-client.ts';

/** Answer buffers that scribble over whatever is given back, and remember it all. */
class ScribbledBuffers implements AnswerBuffers {
  readonly lent: Buffer[] = [];
  readonly givenBack: Buffer[] = [];
  lend(length: number): Buffer {
    const b = Buffer.alloc(length);
    this.lent.push(b);
    return b;
  }
  giveBack(buffer: Buffer): void {
    const lent = this.lent.find((b) => b.buffer === buffer.buffer);
    expect(lent).toBeDefined();
    expect(this.givenBack).not.toContain(lent);
    this.givenBack.push(lent!);
    lent!.fill(0xaa);
  }
  /** Lent and not given back: what the answer may still point into. */
  get held(): Buffer[] {
    return this.lent.filter((b) => !this.givenBack.includes(b));
  }
}

let tmp: ReturnType<typeof tempDir>;
const logs = new Map<string, PartitionLog>();

beforeEach(() => {
  tmp = tempDir('fetch-');
});
afterEach(async () => {
  for (const log of logs.values()) await log.close();
  logs.clear();
  tmp.remove();
});

/** Opens partition `name`-0, first writing `segments` (base offset -> batches) as its files. */
function openLog(name: string, segments: Record<number, Buffer[]> = {}): PartitionLog {
  const dir = join(tmp.dir, `${name}-0`);
  mkdirSync(dir, { recursive: true });
  for (const [base, batches] of Object.entries(segments)) {
    writeFileSync(join(dir, segmentFileName(Number(base), '.log')), Buffer.concat(batches));
  }
  const log = PartitionLog.open({
    dir,
    topic: name,
    partition: 0,
    config: topicConfig(),
    clock: systemClock,
  });
  logs.set(name, log);
  return log;
}

/** What the cleaner leaves of an idempotent producer's last batch: its offsets, no records. */
const emptied = (baseOffset: number, lastOffsetDelta: number) =>
  encodeBatch({
    baseOffset,
    records: [],
    lastOffsetDelta,
    producerId: 7,
    producerEpoch: 0,
    baseSequence: 0,
    maxTimestamp: 1000,
  });

const values = (n: number, seed: number) =>
  Array.from({ length: n }, (_, i) => pseudoRandom(seed + i, 20_000));
const dataBatch = (baseOffset: number, vs: Buffer[]) =>
  encodeBatch({ baseOffset, records: vs.map((value) => ({ timestamp: 1000, key: null, value })) });

function fetch(
  name: string,
  fetchOffset: number,
  buffers: AnswerBuffers | undefined,
  options: { minBytes?: number; maxWaitMs?: number; isolationLevel?: number } = {},
): Promise<Message> {
  const context: RequestContext = {
    apiKey: 1,
    apiVersion: 11,
    correlationId: 1,
    clientId: 'test',
    connection: { id: 1, remoteAddress: 'test', answerBuffers: buffers },
  };
  const services = {
    logs: { getLog: (topic: string) => logs.get(topic) },
    producerStates: new ProducerStateStore(getLogger('test')),
    clock: systemClock,
    stopping: new AbortController().signal,
  } as unknown as BrokerServices;
  const body: Message = {
    replicaId: -1,
    maxWaitMs: options.maxWaitMs ?? 0,
    minBytes: options.minBytes ?? 0,
    maxBytes: 8 << 20,
    isolationLevel: options.isolationLevel ?? 0,
    topics: [
      {
        topic: name,
        partitions: [
          { partition: 0, fetchOffset: BigInt(fetchOffset), partitionMaxBytes: 1 << 20 },
        ],
      },
    ],
  };
  return handleFetch(body, context, services) as Promise<Message>;
}

/** The records of the answer's one partition, CRCs checked, as [offset, value]. */
function recordsOf(res: Message): Array<[number, Buffer]> {
  const records = res.responses[0].partitions[0].records as Buffer;
  const out: Array<[number, Buffer]> = [];
  for (const { position } of iterateBatches(records, 0, records.length, true)) {
    for (const r of decodeRecords(records, position)) out.push([r.offset, r.value!]);
  }
  return out;
}

describe('Fetch with answer buffers', () => {
  it('leaves out leading empty batches and answers with a view of the read, which it keeps', async () => {
    const vs = values(3, 1);
    openLog('view', { 0: [emptied(0, 4), dataBatch(5, vs)] });
    const buffers = new ScribbledBuffers();
    const res = await fetch('view', 0, buffers);
    expect(recordsOf(res)).toEqual(vs.map((v, i) => [5 + i, v]));
    expect(buffers.givenBack).toEqual([]);
    expect(
      res.responses[0].partitions[0].records.buffer === buffers.lent[0]!.buffer,
      'the lent buffer',
    ).toBe(true);
  });

  it('gives back a read of nothing but empty batches and reads on into the next segment', async () => {
    const vs = values(3, 10);
    openLog('past', { 0: [emptied(0, 4)], 5: [dataBatch(5, vs)] });
    const buffers = new ScribbledBuffers();
    const res = await fetch('past', 0, buffers);
    expect(recordsOf(res)).toEqual(vs.map((v, i) => [5 + i, v]));
    expect(buffers.lent).toHaveLength(2);
    expect(buffers.givenBack).toEqual([buffers.lent[0]]);
  });

  it('answers nothing, holding nothing, when empty batches are all the log has', async () => {
    openLog('only-empty', { 0: [emptied(0, 4)] });
    const buffers = new ScribbledBuffers();
    const res = await fetch('only-empty', 0, buffers);
    expect(res.responses[0].partitions[0].records.length).toBe(0);
    expect(buffers.held).toEqual([]);
  });

  it('gives back the reads of long-poll passes it does not answer with, and answers with the last', async () => {
    const log = openLog('poll');
    const buffers = new ScribbledBuffers();
    // Three batches of about 60 KB each are needed for minBytes.
    const answer = fetch('poll', 0, buffers, { minBytes: 150_000, maxWaitMs: 10_000 });
    const sent: Buffer[] = [];
    for (let i = 0; i < 3; i++) {
      const vs = values(3, 100 + i * 3);
      sent.push(...vs);
      await log.append(
        encodeBatch({ records: vs.map((value) => ({ timestamp: 1000, key: null, value })) }),
      );
      // The woken fetch reads this batch and, short of minBytes, drops that pass (gives
      // its read back) before waiting again: the next append is read by a pass of its own.
      if (i < 2) {
        await waitFor(`pass ${i + 1} dropped`, () =>
          buffers.givenBack.length > i ? true : undefined,
        );
      }
    }
    const res = await answer;
    expect(recordsOf(res)).toEqual(sent.map((v, i) => [i, v]));
    // The first pass read nothing; the two passes after the first two appends were dropped.
    expect(buffers.lent).toHaveLength(3);
    expect(buffers.givenBack).toEqual(buffers.lent.slice(0, 2));
    expect(
      res.responses[0].partitions[0].records.buffer === buffers.held[0]!.buffer,
      'the held buffer',
    ).toBe(true);
  });

  it('answers read_committed, read_uncommitted and without answer buffers with the same bytes', async () => {
    const log = openLog('isolation');
    await log.append(batchOf(20, { valueBytes: 3000 }));
    await log.append(batchOf(5, { start: 20 }));
    const answers = await Promise.all([
      fetch('isolation', 3, new ScribbledBuffers(), { isolationLevel: 1 }),
      fetch('isolation', 3, new ScribbledBuffers(), { isolationLevel: 0 }),
      fetch('isolation', 3, undefined),
    ]);
    const [committed, ...others] = answers.map((a) => a.responses[0].partitions[0]);
    expect(committed.records.length).toBeGreaterThan(60_000);
    for (const other of others) {
      expect(Buffer.compare(other.records, committed.records)).toBe(0);
      expect(other.lastStableOffset).toBe(committed.lastStableOffset);
    }
  });
});

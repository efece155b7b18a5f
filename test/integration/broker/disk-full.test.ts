/**
 * A full disk under a running broker (issue #19): a produce that cannot be written is
 * answered KAFKA_STORAGE_ERROR (not a dropped connection), leaves no torn bytes in
 * the segment, reads and other appends keep being served, appends resume once space
 * returns, and every acknowledged record survives, a kill -9 included.
 *
 * The disk is a real 4 MiB tmpfs mounted for the test (we run as root), filled by a
 * filler file: truncating the filler returns exactly the space the test chooses. A
 * mount that fails fails the test; the mount is removed at the end, pass or fail.
 */
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  ftruncateSync,
  mkdtempSync,
  openSync,
  readdirSync,
  rmdirSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { kafka } from '../../conformance/helpers/kafkajs.ts';
import { consumeAll } from '../../conformance/helpers/kcat.ts';
import { useBrokerProcess } from '../../helpers/broker.ts';

const TOPIC = 'disk-full';

/** Mounts a tmpfs of `sizeMiB` for the current test and returns its path. */
function useTmpfs(sizeMiB: number): string {
  const mountPoint = mkdtempSync(join(tmpdir(), 'disk-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m`, 'tmpfs', mountPoint]);
  } catch (e) {
    rmdirSync(mountPoint);
    throw new Error(`this test needs a tmpfs it can mount (run as root): ${String(e)}`);
  }
  onTestFinished(() => {
    // Lazy: succeeds even while a broker that is still stopping holds files open.
    execFileSync('umount', ['-l', mountPoint]);
    rmdirSync(mountPoint);
  });
  return mountPoint;
}

/**
 * Fills the file system holding `dir` but for about `leaveBytes`, with one filler
 * file; `release()` removes it.
 */
function fillDisk(dir: string, leaveBytes: number): { release(): void } {
  const path = join(dir, 'filler');
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(64 * 1024, 0xee);
  let size = 0;
  try {
    for (;;) size += writeSync(fd, chunk);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
  }
  ftruncateSync(fd, Math.max(0, size - leaveBytes));
  closeSync(fd);
  return { release: () => unlinkSync(path) };
}

/** The Kafka error name (kafkajs `type`) somewhere in a kafkajs error's cause chain. */
function kafkaErrorType(e: unknown): string | undefined {
  for (let at = e as { type?: string; cause?: unknown } | undefined; at; at = at.cause as never) {
    if (typeof at.type === 'string') return at.type;
  }
  return undefined;
}

/** Size of the partition's segment files together, as the file system sees them. */
function segmentBytes(dataDir: string, partition: number): number {
  const dir = join(dataDir, `${TOPIC}-${partition}`);
  return readdirSync(dir)
    .filter((name) => name.endsWith('.log'))
    .reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);
}

async function startOnTmpfs(dataDir: string) {
  const broker = await useBrokerProcess(dataDir, {
    'log.flush.interval.messages': 1,
    'offsets.topic.num.partitions': 1,
  });
  const client = kafka(broker.bootstrap, { retry: { retries: 0 } });
  const producer = client.producer();
  await producer.connect();
  onTestFinished(() => producer.disconnect());
  const acknowledged: string[] = [];
  const send = async (partition: number, value: string) => {
    await producer.send({ topic: TOPIC, acks: -1, messages: [{ partition, key: value, value }] });
    acknowledged.push(value);
  };
  /** The Kafka error a send failed with, or 'NONE'. */
  const sendError = (partition: number, value: string) =>
    send(partition, value).then(
      () => 'NONE',
      (e: unknown) => kafkaErrorType(e) ?? `not a Kafka error: ${String(e)}`,
    );
  return { broker, client, producer, acknowledged, send, sendError };
}

async function createTopic(bootstrap: string): Promise<void> {
  const admin = kafka(bootstrap).admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 2 }] });
  } finally {
    await admin.disconnect();
  }
}

/** Every acknowledged record is there once, offsets are dense and every record is whole. */
async function expectEveryAcknowledged(bootstrap: string, acknowledged: string[]): Promise<void> {
  const records = await consumeAll(bootstrap, TOPIC, ['-X', 'check.crcs=true']);
  const values = records.map((r) => r.value);
  expect(acknowledged.filter((v) => !values.includes(v))).toEqual([]);
  for (const p of [0, 1]) {
    const offsets = records.filter((r) => r.partition === p).map((r) => r.offset);
    expect(offsets).toEqual(offsets.map((_, i) => i));
  }
  for (const r of records) expect(r.key).toBe(r.value);
}

const big = (name: string) => `${name}:${'x'.repeat(64 * 1024)}`;

describe('a broker whose disk fills up', () => {
  it('answers KAFKA_STORAGE_ERROR, keeps serving, leaves no torn tail, and resumes once space returns', async () => {
    const mount = useTmpfs(4);
    const dataDir = join(mount, 'data');
    const b = await startOnTmpfs(dataDir);
    await createTopic(b.broker.bootstrap);
    for (let i = 0; i < 20; i++) await b.send(i % 2, `before-${i}`);

    // Room for a few pages: a 64 KiB record is partly written, then ENOSPC.
    const filler = fillDisk(mount, 8192);
    const sizeBefore = segmentBytes(dataDir, 0);
    expect(await b.sendError(0, big('refused'))).toBe('KAFKA_STORAGE_ERROR');
    expect(segmentBytes(dataDir, 0)).toBe(sizeBefore);

    // Same connection, same broker: a record that fits is taken, on either partition.
    expect(await b.sendError(1, 'small-while-full-1')).toBe('NONE');
    expect(await b.sendError(0, 'small-while-full-0')).toBe('NONE');
    await expectEveryAcknowledged(b.broker.bootstrap, b.acknowledged);

    filler.release();
    expect(await b.sendError(0, big('after-space-returned'))).toBe('NONE');
    for (let i = 0; i < 10; i++) await b.send(i % 2, `after-${i}`);
    await expectEveryAcknowledged(b.broker.bootstrap, b.acknowledged);
    const refused = (await consumeAll(b.broker.bootstrap, TOPIC)).filter((r) =>
      r.value?.startsWith('refused:'),
    );
    expect(refused).toEqual([]);
  });

  it('serves every acknowledged record after a kill -9 while full, then takes appends again', async () => {
    const mount = useTmpfs(4);
    const dataDir = join(mount, 'data');
    const first = await startOnTmpfs(dataDir);
    await createTopic(first.broker.bootstrap);
    for (let i = 0; i < 20; i++) await first.send(i % 2, `before-${i}`);
    const filler = fillDisk(mount, 8192);
    expect(await first.sendError(0, big('refused'))).toBe('KAFKA_STORAGE_ERROR');
    first.broker.process.signal('SIGKILL');
    await first.broker.process.exited;

    filler.release();
    const second = await startOnTmpfs(dataDir);
    await expectEveryAcknowledged(second.broker.bootstrap, first.acknowledged);
    expect(await second.sendError(0, big('after-restart'))).toBe('NONE');
    await expectEveryAcknowledged(second.broker.bootstrap, [
      ...first.acknowledged,
      ...second.acknowledged,
    ]);
  });
});

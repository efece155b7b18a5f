import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PartitionLog } from '../../../../src/broker/log/partition-log.ts';
import { batchLastOffset, iterateBatches } from '../../../../src/protocol/record-batch.ts';
import { ManualClock } from '../../../../src/util/clock.ts';
import { tempDir, topicConfig } from './log-test-helpers.ts';

let tmp: ReturnType<typeof tempDir>;
let child: ChildProcess | undefined;
let log: PartitionLog | undefined;

beforeEach(() => {
  tmp = tempDir('crash-');
});
afterEach(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await log?.close();
  log = undefined;
  tmp.remove();
});

/** Runs the appending child until it has acknowledged `acks` appends, then SIGKILLs it. */
async function runAndKill(acks: number): Promise<number> {
  const script = join(import.meta.dirname, 'fixtures', 'append-child.ts');
  child = spawn(process.execPath, ['--import', 'tsx', script, tmp.dir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d) => {
    stderr += d;
  });
  let highestAcked = -1;
  let seen = 0;
  const exited = new Promise<void>((resolve) => child?.once('exit', () => resolve()));
  for await (const line of createInterface({ input: child.stdout! })) {
    const m = /^ack (\d+)$/.exec(line);
    if (!m) continue;
    highestAcked = Math.max(highestAcked, Number(m[1]));
    if (++seen === acks) {
      child.kill('SIGKILL');
      break;
    }
  }
  await exited;
  if (seen < acks) throw new Error(`child stopped after ${seen} acks: ${stderr}`);
  return highestAcked;
}

describe('crash recovery', () => {
  it('after SIGKILL mid-stream under flush.messages=1, every acknowledged offset is readable and nothing corrupt is served', async () => {
    const acked = await runAndKill(400);
    const acked2 = await runAndKill(300); // recover, append more, crash again
    expect(acked2).toBeGreaterThan(acked);
    log = PartitionLog.open({
      dir: tmp.dir,
      topic: 'crash',
      partition: 0,
      config: topicConfig({ 'segment.bytes': 64 * 1024 }),
      clock: new ManualClock(0),
    });
    expect(log.logEndOffset).toBeGreaterThan(acked2);
    let offset = 0;
    while (offset < log.logEndOffset) {
      const { records } = log.read(offset, 64 * 1024, true);
      // Verifies every served batch's CRC, throwing on the first bad one.
      for (const { position } of iterateBatches(records, 0, records.length, true)) {
        offset = batchLastOffset(records, position) + 1;
      }
    }
    const values = [...log.records(0)];
    expect(values.length).toBe(log.logEndOffset);
    for (const r of values)
      expect(r.value?.toString().replace(/\.+$/, '')).toBe(`value-${r.offset}`);
  });
});

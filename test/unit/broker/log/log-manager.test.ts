import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LogError } from '../../../../src/broker/log/errors.ts';
import { LogManager } from '../../../../src/broker/log/log-manager.ts';
import { ManualClock } from '../../../../src/util/clock.ts';
import { batchOf, tempDir } from './log-test-helpers.ts';

let tmp: ReturnType<typeof tempDir>;
let manager: LogManager | undefined;
const clock = new ManualClock(1_000_000);

function open(brokerConfig: Record<string, unknown> = {}): LogManager {
  manager = LogManager.open({ dataDir: tmp.dir, brokerConfig, clock });
  return manager;
}

async function reopen(brokerConfig: Record<string, unknown> = {}): Promise<LogManager> {
  await manager?.close();
  return open(brokerConfig);
}

function kafkaErrorOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    if (e instanceof LogError) return e.kafkaError;
    throw e;
  }
  return undefined;
}

beforeEach(() => {
  tmp = tempDir('manager-');
});
afterEach(async () => {
  await manager?.close();
  manager = undefined;
  tmp.remove();
});

describe('LogManager', () => {
  it('topics, partition counts, ids, configs and data survive reopening', async () => {
    let m = open();
    const created = m.createTopic('orders.v1_x-y', 3, {
      'cleanup.policy': 'compact',
      'retention.ms': '1000',
    });
    await m.getLog('orders.v1_x-y', 2).append(batchOf(5));
    m.incrementalAlterConfigs('orders.v1_x-y', [
      { key: 'segment.bytes', op: 'SET', value: '5000' },
    ]);
    m = await reopen({ 'log.retention.bytes': 12345 });
    expect(m.topics()).toEqual([
      {
        name: 'orders.v1_x-y',
        topicId: created.topicId,
        partitions: 3,
        configs: { 'cleanup.policy': 'compact', 'retention.ms': '1000', 'segment.bytes': '5000' },
      },
    ]);
    const config = m.effectiveConfig('orders.v1_x-y');
    expect(config.cleanupPolicy).toEqual({ delete: false, compact: true });
    expect([config.retentionMs, config.segmentBytes, config.retentionBytes]).toEqual([
      1000, 5000, 12345,
    ]);
    expect(m.getLog('orders.v1_x-y', 2).logEndOffset).toBe(5);
    expect(m.getLog('orders.v1_x-y', 2).config.segmentBytes).toBe(5000);
  });

  it('admin errors carry the Kafka error names the server returns', () => {
    const m = open();
    m.createTopic('a', 1);
    expect(kafkaErrorOf(() => m.createTopic('a', 1))).toBe('TOPIC_ALREADY_EXISTS');
    expect(kafkaErrorOf(() => m.createTopic('bad/name', 1))).toBe('INVALID_TOPIC_EXCEPTION');
    expect(kafkaErrorOf(() => m.createTopic('..', 1))).toBe('INVALID_TOPIC_EXCEPTION');
    expect(kafkaErrorOf(() => m.createTopic('x'.repeat(250), 1))).toBe('INVALID_TOPIC_EXCEPTION');
    expect(kafkaErrorOf(() => m.createTopic('b', 0))).toBe('INVALID_PARTITIONS');
    expect(kafkaErrorOf(() => m.createPartitions('a', 1))).toBe('INVALID_PARTITIONS');
    expect(kafkaErrorOf(() => m.getLog('a', 1))).toBe('UNKNOWN_TOPIC_OR_PARTITION');
    expect(kafkaErrorOf(() => m.getLog('nope', 0))).toBe('UNKNOWN_TOPIC_OR_PARTITION');
  });

  it('bad config keys or values are INVALID_CONFIG naming the key', () => {
    const m = open();
    const messageOf = (fn: () => unknown) => {
      try {
        fn();
      } catch (e) {
        return `${(e as LogError).kafkaError}: ${(e as Error).message}`;
      }
    };
    expect(messageOf(() => m.createTopic('c', 1, { 'retention.mss': '1' }))).toMatch(
      /^INVALID_CONFIG: .*retention\.mss/,
    );
    expect(messageOf(() => m.createTopic('c', 1, { 'cleanup.policy': 'shred' }))).toMatch(
      /^INVALID_CONFIG: .*cleanup\.policy/,
    );
    expect(messageOf(() => m.createTopic('c', 1, { 'segment.bytes': 'big' }))).toMatch(
      /^INVALID_CONFIG: .*segment\.bytes/,
    );
    expect(m.topics()).toEqual([]);
  });

  it('validate-only changes nothing', () => {
    const m = open();
    m.createTopic('v', 2, {}, { validateOnly: true });
    expect(m.topics()).toEqual([]);
    expect(existsSync(join(tmp.dir, 'v-0'))).toBe(false);
  });

  it('createPartitions adds logs; deleteTopic removes metadata and directories', async () => {
    let m = open();
    m.createTopic('grow', 1);
    m.createPartitions('grow', 4);
    await m.getLog('grow', 3).append(batchOf(2));
    m = await reopen();
    expect(m.topic('grow')?.partitions).toBe(4);
    expect(m.getLog('grow', 3).logEndOffset).toBe(2);
    await m.deleteTopic('grow');
    expect(m.topics()).toEqual([]);
    expect(existsSync(join(tmp.dir, 'grow-0'))).toBe(false);
    m = await reopen();
    expect(m.topics()).toEqual([]);
  });

  it('a partition directory no topic claims (an interrupted create) is removed on open', async () => {
    mkdirSync(join(tmp.dir, 'ghost-0'));
    open();
    expect(existsSync(join(tmp.dir, 'ghost-0'))).toBe(false);
  });

  it('APPEND and SUBTRACT edit list configs; alterConfigs replaces all overrides', () => {
    const m = open();
    m.createTopic('l', 1);
    m.incrementalAlterConfigs('l', [{ key: 'cleanup.policy', op: 'APPEND', value: 'compact' }]);
    expect(m.effectiveConfig('l').cleanupPolicy).toEqual({ delete: true, compact: true });
    m.incrementalAlterConfigs('l', [{ key: 'cleanup.policy', op: 'SUBTRACT', value: 'delete' }]);
    expect(m.topic('l')?.configs).toEqual({ 'cleanup.policy': 'compact' });
    m.alterConfigs('l', { 'retention.ms': '5' });
    expect(m.topic('l')?.configs).toEqual({ 'retention.ms': '5' });
    expect(m.getLog('l', 0).config.cleanupPolicy).toEqual({ delete: true, compact: false });
  });

  it('the scheduler applies retention on the injected clock', async () => {
    const m = LogManager.open({
      dataDir: tmp.dir,
      brokerConfig: {},
      clock,
      retentionCheckIntervalMs: 1000,
    });
    manager = m;
    m.createTopic('r', 1, { 'retention.ms': '1000', 'segment.bytes': '300' });
    const log = m.getLog('r', 0);
    for (let i = 0; i < 10; i++)
      await log.append(batchOf(2, { start: i * 2, timestamp: clock.now() }));
    const before = log.segments.length;
    expect(before).toBeGreaterThan(2);
    clock.advance(5000);
    await m.scheduler.runDue();
    expect(log.segments.length).toBe(1);
    expect(log.logStartOffset).toBe(log.segments[0].baseOffset);
  });
});

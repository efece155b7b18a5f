import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProducerIdManager } from '../../../../src/broker/producer/producer-id-manager.ts';
import {
  type BatchIdentity,
  ProducerState,
} from '../../../../src/broker/producer/producer-state.ts';

const batch = (
  baseSequence: number,
  count: number,
  producerEpoch = 0,
  producerId = 7,
): BatchIdentity => ({
  producerId,
  producerEpoch,
  baseSequence,
  lastOffsetDelta: count - 1,
});

describe('ProducerState', () => {
  it('answers a retried batch with its original offsets instead of appending it again', () => {
    const state = new ProducerState();
    expect(state.check(batch(0, 10))).toEqual({ kind: 'append' });
    state.onAppend(batch(0, 10), 100, 1);
    expect(state.check(batch(10, 5))).toEqual({ kind: 'append' });
    state.onAppend(batch(10, 5), 110, 2);
    expect(state.check(batch(0, 10))).toEqual({
      kind: 'duplicate',
      firstOffset: 100,
      lastOffset: 109,
    });
    expect(state.check(batch(10, 5))).toEqual({
      kind: 'duplicate',
      firstOffset: 110,
      lastOffset: 114,
    });
  });

  it('refuses a gap in sequence numbers', () => {
    const state = new ProducerState();
    state.onAppend(batch(0, 10), 0, 1);
    const check = state.check(batch(11, 1));
    expect(check).toMatchObject({ kind: 'error', error: 'OUT_OF_ORDER_SEQUENCE_NUMBER' });
  });

  it('fences an older epoch and requires a new epoch to start at zero', () => {
    const state = new ProducerState();
    state.onAppend(batch(0, 1, 3), 0, 1);
    expect(state.check(batch(1, 1, 2))).toMatchObject({
      kind: 'error',
      error: 'INVALID_PRODUCER_EPOCH',
    });
    expect(state.check(batch(5, 1, 4))).toMatchObject({
      kind: 'error',
      error: 'OUT_OF_ORDER_SEQUENCE_NUMBER',
    });
    expect(state.check(batch(0, 1, 4))).toEqual({ kind: 'append' });
  });

  it('remembers only the last five batches of a producer', () => {
    const state = new ProducerState();
    for (let i = 0; i < 6; i++) state.onAppend(batch(i, 1), i, i);
    expect(state.check(batch(0, 1))).toMatchObject({ kind: 'error' });
    expect(state.check(batch(1, 1))).toMatchObject({ kind: 'duplicate', firstOffset: 1 });
  });

  it('wraps sequences at 2^31-1', () => {
    const state = new ProducerState();
    state.onAppend(batch(2147483645, 3), 0, 0);
    expect(state.check(batch(0, 1))).toEqual({ kind: 'append' });
    expect(state.check(batch(1, 1))).toMatchObject({ kind: 'error' });
  });

  it('survives a snapshot round trip', () => {
    const state = new ProducerState();
    state.onAppend(batch(0, 3), 50, 1);
    const restored = ProducerState.fromSnapshot(JSON.parse(JSON.stringify(state.snapshot(53))));
    expect(restored.check(batch(0, 3))).toEqual({
      kind: 'duplicate',
      firstOffset: 50,
      lastOffset: 52,
    });
    expect(restored.check(batch(3, 1))).toEqual({ kind: 'append' });
  });
});

describe('ProducerIdManager', () => {
  it('never hands out an id twice across reopenings', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pid-'));
    try {
      const first = await ProducerIdManager.open(dir);
      const ids = [await first.allocate(), await first.allocate()];
      const second = await ProducerIdManager.open(dir);
      const later = await Promise.all([second.allocate(), second.allocate()]);
      expect(new Set([...ids, ...later]).size).toBe(4);
      expect(Math.min(...later)).toBeGreaterThan(Math.max(...ids));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/** ProducerState's transaction tracking: what gives a partition its last stable offset. */
import { describe, expect, it } from 'vitest';
import {
  type BatchIdentity,
  ProducerState,
} from '../../../../src/broker/producer/producer-state.ts';

const batch = (
  producerId: number,
  baseSequence: number,
  count = 1,
  producerEpoch = 0,
): BatchIdentity => ({
  producerId,
  producerEpoch,
  baseSequence,
  lastOffsetDelta: count - 1,
});

describe('ProducerState transactions', () => {
  it('a transaction opens at its first batch and closes at its marker; the oldest open one is the first unstable offset', () => {
    const state = new ProducerState();
    state.onAppend(batch(1, 0, 2), 10, 0, true);
    state.onAppend(batch(2, 0), 12, 0, true);
    state.onAppend(batch(1, 2), 13, 0, true);
    state.onAppend(batch(3, 0), 14, 0, false);
    expect(state.firstUnstableOffset()).toBe(10);
    expect(state.onMarker(1, 0, 15, 0)).toEqual({ producerId: 1, firstOffset: 10, lastOffset: 15 });
    expect(state.firstUnstableOffset()).toBe(12);
    state.onMarker(2, 0, 16, 0);
    expect(state.firstUnstableOffset()).toBeUndefined();
    // A marker with nothing open closes nothing.
    expect(state.onMarker(2, 0, 17, 0).firstOffset).toBe(-1);
  });

  it('keeps open transactions through a snapshot and never expires their producer', () => {
    const state = new ProducerState();
    state.onAppend(batch(1, 0), 5, 0, true);
    state.onAppend(batch(2, 0), 6, 0, false);
    const restored = ProducerState.fromSnapshot(JSON.parse(JSON.stringify(state.snapshot(7))));
    expect(restored.firstUnstableOffset()).toBe(5);
    restored.expire(1_000_000, 10);
    expect(restored.size).toBe(1);
    expect(restored.firstUnstableOffset()).toBe(5);
  });

  it('a marker of a newer epoch (the coordinator fencing) makes it current: the old epoch is refused, the new starts at 0', () => {
    const state = new ProducerState();
    state.onAppend(batch(1, 0, 3), 0, 0, true);
    state.onMarker(1, 1, 3, 0);
    expect(state.check(batch(1, 3, 1, 0)).kind).toBe('error');
    expect(state.check(batch(1, 0, 1, 1))).toEqual({ kind: 'append' });
    expect(state.checkMarker(1, 0)).toMatch(/older/);
  });
});

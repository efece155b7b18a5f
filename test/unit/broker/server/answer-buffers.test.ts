import { describe, expect, it } from 'vitest';
import { AnswerHold } from '../../../../src/broker/server/answer-buffers.ts';
import { BufferPool, MAX_POOLED_BYTES } from '../../../../src/util/buffer-pool.ts';

const KiB = 1024;

describe('BufferPool', () => {
  it('lends a released buffer again, for a read of any length of its size', () => {
    const pool = new BufferPool();
    const first = pool.lend(1000 * KiB);
    first.release();
    const second = pool.lend(600 * KiB);
    expect(second.buffer.buffer).toBe(first.buffer.buffer);
    expect(second.buffer.length).toBe(600 * KiB);
  });

  it('lends buffers of the power-of-two size at or above the length, from 64 KiB', () => {
    const pool = new BufferPool();
    for (const [length, size] of [
      [32 * KiB, 64 * KiB],
      [64 * KiB, 64 * KiB],
      [64 * KiB + 1, 128 * KiB],
      [1024 * KiB, 1024 * KiB],
      [MAX_POOLED_BYTES, MAX_POOLED_BYTES],
    ]) {
      const lease = pool.lend(length!);
      expect(lease.pooled).toBe(true);
      expect(lease.buffer.length).toBe(length);
      expect(lease.buffer.buffer.byteLength).toBe(size);
    }
  });

  it('never lends a buffer that is still lent, however often a lease is released', () => {
    const pool = new BufferPool();
    const first = pool.lend(100 * KiB);
    first.release();
    first.release();
    const a = pool.lend(100 * KiB);
    const b = pool.lend(100 * KiB);
    expect(a.buffer.buffer).not.toBe(b.buffer.buffer);
    // A stale release of the first lease does not give back `a`, which now holds that buffer.
    first.release();
    expect(pool.lend(100 * KiB).buffer.buffer).not.toBe(a.buffer.buffer);
    expect(pool.lentBuffers).toBe(3);
  });

  it('does not pool reads below 32 KiB or above MAX_POOLED_BYTES', () => {
    const pool = new BufferPool();
    for (const length of [1, 32 * KiB - 1, MAX_POOLED_BYTES + 1]) {
      const lease = pool.lend(length);
      expect(lease.pooled).toBe(false);
      expect(lease.buffer.length).toBe(length);
      lease.release();
    }
    expect(pool.pooledBytes).toBe(0);
    expect(pool.lentBuffers).toBe(0);
  });

  it('keeps at most 8 buffers of a size, and 32 MiB in all, waiting', () => {
    const pool = new BufferPool();
    const small = Array.from({ length: 20 }, () => pool.lend(64 * KiB));
    for (const l of small) l.release();
    expect(pool.pooledBytes).toBe(8 * 64 * KiB);
    const large = Array.from({ length: 8 }, () => pool.lend(MAX_POOLED_BYTES));
    for (const l of large) l.release();
    expect(pool.pooledBytes).toBeLessThanOrEqual(32 * 1024 * KiB);
    expect(pool.pooledBytes).toBeGreaterThanOrEqual(3 * MAX_POOLED_BYTES);
  });

  it('keeps no more waiting buffers than its options allow (the producer keeps one per request in flight)', () => {
    const pool = new BufferPool({ maxFreePerSize: 6, maxFreeBytes: 4 * 1024 * KiB });
    const batches = Array.from({ length: 10 }, () => pool.lend(600 * KiB));
    for (const l of batches) l.release();
    expect(pool.pooledBytes).toBe(4 * 1024 * KiB);
    const small = Array.from({ length: 10 }, () => pool.lend(64 * KiB));
    for (const l of small) l.release();
    expect(pool.pooledBytes).toBe(4 * 1024 * KiB);
  });

  it('drops the waiting buffers of a size only after a whole trim interval without lending it', () => {
    const pool = new BufferPool();
    pool.lend(64 * KiB).release();
    pool.lend(1024 * KiB).release();
    pool.trimIfIdle();
    expect(pool.pooledBytes).toBe(1088 * KiB);
    pool.lend(1000 * KiB).release();
    pool.trimIfIdle();
    expect(pool.pooledBytes).toBe(1024 * KiB);
    pool.trimIfIdle();
    expect(pool.pooledBytes).toBe(0);
  });

  it('takes nothing back once closed, and lends only unpooled buffers', () => {
    const pool = new BufferPool();
    const lent = pool.lend(100 * KiB);
    pool.lend(100 * KiB).release();
    pool.close();
    expect(pool.pooledBytes).toBe(0);
    lent.release();
    expect(pool.pooledBytes).toBe(0);
    expect(pool.lend(100 * KiB).pooled).toBe(false);
  });
});

describe('AnswerHold', () => {
  it('gives back, once, each buffer it lent, early by giveBack or at releaseAll', () => {
    const pool = new BufferPool();
    const hold = new AnswerHold(pool);
    const a = hold.lend(100 * KiB);
    const b = hold.lend(200 * KiB);
    expect(hold.holdsBuffers).toBe(true);
    // A view of a buffer gives back the whole buffer.
    hold.giveBack(a.subarray(10));
    expect(pool.lentBuffers).toBe(1);
    hold.giveBack(a);
    hold.giveBack(Buffer.alloc(100 * KiB));
    expect(pool.lentBuffers).toBe(1);
    hold.releaseAll();
    hold.releaseAll();
    expect(pool.lentBuffers).toBe(0);
    expect(pool.pooledBytes).toBe(128 * KiB + 256 * KiB);
    expect(b.length).toBe(200 * KiB);
  });

  it('does not give back a buffer it did not lend, even one of the same pool', () => {
    const pool = new BufferPool();
    const other = pool.lend(100 * KiB);
    const hold = new AnswerHold(pool);
    hold.lend(100 * KiB);
    hold.giveBack(other.buffer);
    expect(pool.lentBuffers).toBe(2);
  });

  it('lends unpooled buffers after releaseAll, which nothing would give back', () => {
    const pool = new BufferPool();
    const hold = new AnswerHold(pool);
    hold.releaseAll();
    hold.lend(100 * KiB);
    expect(pool.lentBuffers).toBe(0);
    expect(hold.holdsBuffers).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { FramePool, MAX_POOLED_FRAME_BYTES } from '../../../../src/broker/server/frame-pool.ts';

describe('FramePool', () => {
  it('lends a released buffer again, for a frame of any size up to its capacity', () => {
    const pool = new FramePool();
    const first = pool.lend(1000);
    first.release();
    const second = pool.lend(300);
    expect(second.frame.buffer).toBe(first.frame.buffer);
    expect(second.frame.length).toBe(300);
  });

  it('never lends a buffer that is still lent, however often a lease is released', () => {
    const pool = new FramePool();
    const first = pool.lend(1000);
    first.release();
    first.release();
    const a = pool.lend(1000);
    const b = pool.lend(1000);
    expect(a.frame.buffer).not.toBe(b.frame.buffer);
    // A stale release of the first lease does not give back `a`, which now holds that buffer.
    first.release();
    expect(pool.lend(1000).frame.buffer).not.toBe(a.frame.buffer);
  });

  it('drops smaller buffers, waiting or coming back, once a larger frame raises the capacity', () => {
    const pool = new FramePool();
    pool.lend(1000).release();
    const stillLent = pool.lend(1000);
    const large = pool.lend(200_000);
    expect(pool.pooledBytes).toBe(0);
    stillLent.release();
    expect(pool.pooledBytes).toBe(0);
    large.release();
    expect(pool.pooledBytes).toBe(large.frame.buffer.byteLength);
    expect(pool.lend(1000).frame.buffer).toBe(large.frame.buffer);
  });

  it('does not pool frames above MAX_POOLED_FRAME_BYTES', () => {
    const pool = new FramePool();
    const huge = pool.lend(MAX_POOLED_FRAME_BYTES + 1);
    huge.release();
    expect(pool.pooledBytes).toBe(0);
    expect(pool.lend(MAX_POOLED_FRAME_BYTES + 1).frame.buffer).not.toBe(huge.frame.buffer);
  });

  it('keeps a bounded number of buffers waiting', () => {
    const pool = new FramePool();
    const leases = Array.from({ length: 50 }, () => pool.lend(64 * 1024));
    for (const l of leases) l.release();
    expect(pool.pooledBytes).toBeGreaterThan(0);
    expect(pool.pooledBytes).toBeLessThanOrEqual(8 * 64 * 1024);
  });

  it('drops waiting buffers only after a whole trim interval without lending', () => {
    const pool = new FramePool();
    pool.lend(1000).release();
    pool.trimIfIdle();
    expect(pool.pooledBytes).toBeGreaterThan(0);
    pool.trimIfIdle();
    expect(pool.pooledBytes).toBe(0);
  });

  it('takes nothing back once closed', () => {
    const pool = new FramePool();
    const lent = pool.lend(1000);
    pool.lend(1000).release();
    pool.close();
    expect(pool.pooledBytes).toBe(0);
    lent.release();
    expect(pool.pooledBytes).toBe(0);
  });
});

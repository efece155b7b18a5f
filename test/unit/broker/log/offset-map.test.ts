import { describe, expect, it } from 'vitest';
import { OffsetMap } from '../../../../src/broker/log/offset-map.ts';

describe('OffsetMap', () => {
  it('keeps the latest offset per key through growth, and forgets everything on clear', () => {
    const map = new OffsetMap(200_000);
    const key = (i: number) => Buffer.from(`{"payload":{"id":${i}}}`);
    for (let i = 0; i < 100_000; i++) map.put(key(i), i);
    for (let i = 0; i < 100_000; i += 3) map.put(key(i), 100_000 + i);
    expect(map.size).toBe(100_000);
    for (let i = 0; i < 100_000; i++) {
      expect(map.get(key(i))).toBe(i % 3 === 0 ? 100_000 + i : i);
    }
    expect(map.get(key(100_000))).toBe(-1);
    expect(map.get(Buffer.alloc(0))).toBe(-1);
    map.put(Buffer.alloc(0), 7);
    expect(map.get(Buffer.alloc(0))).toBe(7);
    map.clear();
    expect(map.size).toBe(0);
    expect(map.get(key(5))).toBe(-1);
  });

  it('has room for a batch only while the new keys would fit', () => {
    const map = new OffsetMap(3);
    expect(map.hasRoomFor(3)).toBe(true);
    map.put(Buffer.from('a'), 0);
    map.put(Buffer.from('b'), 1);
    expect(map.hasRoomFor(1)).toBe(true);
    expect(map.hasRoomFor(2)).toBe(false);
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FrameReader } from '../../../src/protocol/client/broker-connection.ts';

/** Feeds `stream` to a reader the way a socket does: reads of at most `sizes[i]` bytes into target(). */
function feed(stream: Buffer, sizes: number[]): { frames: Buffer[]; errors: Error[] } {
  const reader = new FrameReader();
  const frames: Buffer[] = [];
  const errors: Error[] = [];
  reader.onFrame = (f) => frames.push(f);
  reader.onError = (e) => errors.push(e);
  let at = 0;
  for (let i = 0; at < stream.length; i++) {
    const target = reader.target();
    expect(target.length).toBeGreaterThan(0);
    const n = Math.min(target.length, stream.length - at, sizes[i % sizes.length]!);
    stream.copy(target, 0, at, at + n);
    at += n;
    reader.read(n);
  }
  return { frames, errors };
}

function framed(bodies: Buffer[]): Buffer {
  return Buffer.concat(
    bodies.flatMap((b) => {
      const size = Buffer.alloc(4);
      size.writeInt32BE(b.length);
      return [size, b];
    }),
  );
}

describe('FrameReader', () => {
  it('gives back every frame whole, in order, however the bytes are cut (property)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.uint8Array({ maxLength: 40 }),
            fc.integer({ min: 60_000, max: 300_000 }).map((n) => new Uint8Array(n).fill(n & 0xff)),
          ),
          { maxLength: 12 },
        ),
        fc.array(fc.integer({ min: 1, max: 100_000 }), { minLength: 1, maxLength: 8 }),
        (bodies, sizes) => {
          const buffers = bodies.map((b) => Buffer.from(b));
          const { frames, errors } = feed(framed(buffers), sizes);
          expect(errors).toEqual([]);
          expect(frames.length).toBe(buffers.length);
          frames.forEach((f, i) => expect(f.equals(buffers[i]!)).toBe(true));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('keeps frames it handed out intact while later ones arrive', () => {
    const bodies = [Buffer.from('first'), Buffer.alloc(100_000, 7), Buffer.from('third')];
    const { frames } = feed(framed(bodies), [3, 70_000, 1]);
    expect(frames.map((f) => f.equals(bodies[frames.indexOf(f)]!))).toEqual([true, true, true]);
  });

  it('reports a negative frame size as an error', () => {
    const bad = Buffer.alloc(8);
    bad.writeInt32BE(-5);
    const { frames, errors } = feed(bad, [8]);
    expect(frames).toEqual([]);
    expect(errors[0]?.message).toContain('-5 bytes');
  });
});

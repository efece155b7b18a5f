import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CorruptIndexError } from '../../../../src/broker/log/errors.ts';
import { OffsetIndex } from '../../../../src/broker/log/offset-index.ts';
import { TimeIndex } from '../../../../src/broker/log/time-index.ts';
import { tempDir } from './log-test-helpers.ts';

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => {
  tmp = tempDir('index-');
});
afterEach(() => tmp.remove());

/** Strictly increasing (offset, position) pairs, as a segment appends them. */
const entriesArb = fc
  .array(fc.tuple(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 9000 })), {
    maxLength: 300,
  })
  .map((steps) => {
    let offset = 0;
    let position = 0;
    return steps.map(([dOffset, dPosition]) => {
      offset += dOffset;
      position += dPosition;
      return { offset, position };
    });
  });

describe('offset index', () => {
  it('lookup equals a linear scan for the last entry at or below the target', () => {
    fc.assert(
      fc.property(entriesArb, fc.integer({ min: 0, max: 20_000 }), (entries, target) => {
        const index = new OffsetIndex(join(tmp.dir, 'x.index'), 1000, 1 << 20);
        for (const e of entries) index.append(1000 + e.offset, e.position);
        const linear = [...entries].reverse().find((e) => 1000 + e.offset <= 1000 + target);
        expect(index.lookup(1000 + target)).toEqual(
          linear
            ? { offset: 1000 + linear.offset, position: linear.position }
            : { offset: 1000, position: 0 },
        );
      }),
    );
  });

  it('what is written to the file loads back identically', () => {
    fc.assert(
      fc.property(entriesArb, (entries) => {
        const path = join(tmp.dir, 'y.index');
        const index = new OffsetIndex(path, 0, 1 << 20);
        index.clear();
        for (const e of entries) index.append(e.offset, e.position);
        index.writeToFile(false);
        const loaded = new OffsetIndex(path, 0, 1 << 20);
        loaded.load(Number.MAX_SAFE_INTEGER);
        expect(loaded.entries).toBe(entries.length);
        for (let i = 0; i < entries.length; i++) expect(loaded.entry(i)).toEqual(entries[i]);
      }),
      { numRuns: 30 },
    );
  });

  it('a file of garbage fails the sanity check', () => {
    const path = join(tmp.dir, 'z.index');
    writeFileSync(path, Buffer.from('this is not an index at all!'.padEnd(64, '?')));
    expect(() => new OffsetIndex(path, 0, 1 << 20).load(1 << 20)).toThrow(CorruptIndexError);
  });

  it('an entry pointing past the end of the log fails the sanity check', () => {
    const path = join(tmp.dir, 'w.index');
    const index = new OffsetIndex(path, 0, 1 << 20);
    index.append(5, 4096);
    index.writeToFile(false);
    expect(() => new OffsetIndex(path, 0, 1 << 20).load(4000)).toThrow(CorruptIndexError);
  });
});

describe('time index', () => {
  it('lookupBefore finds the last entry with a smaller timestamp, as a linear scan does', () => {
    fc.assert(
      fc.property(entriesArb, fc.integer({ min: 0, max: 3_000_000 }), (entries, target) => {
        const index = new TimeIndex(join(tmp.dir, 'x.timeindex'), 0, 1 << 20);
        // Timestamps grow with positions here; any increasing series will do.
        for (const e of entries) index.maybeAppend(e.position, e.offset);
        const linear = [...entries].reverse().find((e) => e.position < target);
        expect(index.lookupBefore(target)).toEqual(
          linear ? { timestamp: linear.position, offset: linear.offset } : undefined,
        );
      }),
    );
  });
});

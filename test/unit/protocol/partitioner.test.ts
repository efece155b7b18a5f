/**
 * Key partitioning must agree with the other clients' default partitioners, or a key
 * written by kafkajs (or the Java client) and by us would land on two partitions of a
 * compacted topic. kafkajs 2.2.4's murmur2 is the reference here.
 */
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { keyPartition, murmur2 } from '../../../src/protocol/client/partitioner.ts';

const require = createRequire(import.meta.url);
const kafkajsMurmur2: (
  key: Buffer | string,
) => number = require('kafkajs/src/producer/partitioners/default/murmur2.js');

describe('murmur2', () => {
  it('matches kafkajs on every key length and content', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const key = Buffer.from(bytes);
        expect(murmur2(key)).toBe(kafkajsMurmur2(key));
      }),
      { numRuns: 2000 },
    );
  });

  it("matches the Java client's known vectors", () => {
    // From Kafka's UtilsTest.testMurmur2.
    expect(murmur2(Buffer.from('21'))).toBe(-973932308);
    expect(murmur2(Buffer.from('foobar'))).toBe(-790332482);
    expect(murmur2(Buffer.from('a-little-bit-long-string'))).toBe(-985981536);
    expect(murmur2(Buffer.from('a-little-bit-longer-string'))).toBe(-1486304829);
    expect(murmur2(Buffer.from('lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8'))).toBe(
      -58897971,
    );
    expect(murmur2(Buffer.from('abc'))).toBe(479470107);
  });

  it('maps keys onto partitions as toPositive(murmur2) % n', () => {
    const key = Buffer.from('foobar');
    expect(keyPartition(key, 7)).toBe((-790332482 & 0x7fffffff) % 7);
  });
});

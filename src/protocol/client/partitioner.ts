/**
 * The Java client's default key partitioning: `toPositive(murmur2(key)) % partitions`,
 * which kafkajs's DefaultPartitioner and librdkafka's `murmur2_random` use too, so a key
 * lands on the same partition whichever of them produced it. Records without a key go
 * round-robin.
 */

const SEED = 0x9747b28c;
const M = 0x5bd1e995;

/** Murmur2 (32-bit) of `data` as Kafka's Utils.murmur2 computes it, as a signed int32. */
export function murmur2(data: Uint8Array): number {
  const length = data.length;
  let h = SEED ^ length;
  const whole = length & ~3;
  for (let i = 0; i < whole; i += 4) {
    let k = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  const tail = length & 3;
  if (tail === 3) h ^= data[whole + 2]! << 16;
  if (tail >= 2) h ^= data[whole + 1]! << 8;
  if (tail >= 1) {
    h ^= data[whole]!;
    h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}

/** The partition of a keyed record among `partitions` partitions. */
export function keyPartition(key: Uint8Array, partitions: number): number {
  return (murmur2(key) & 0x7fffffff) % partitions;
}

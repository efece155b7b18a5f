/**
 * Buffers lent for one use and given back when nothing reads them any more, for the
 * large, short-lived buffers of the hot paths: the records a Fetch answer reads
 * (broker/server/answer-buffers.ts) and the batches the producer encodes
 * (protocol/client/producer.ts).
 *
 * Why: a fresh Buffer per use is garbage as soon as it is used, but V8 frees
 * ArrayBuffers only when it collects, and a thread that allocates few JS objects
 * collects rarely: tens of MB of dead buffers piled up, each on fresh pages the
 * kernel had to fault in. Reused buffers stay few and warm.
 *
 * Sizes: free buffers come in power-of-two sizes from SMALLEST_SIZE_BYTES to
 * MAX_POOLED_BYTES, so a length is served from a buffer at most twice as large.
 * Lengths below MIN_POOLED_BYTES are not pooled (Node serves those from its slab or a
 * small ArrayBuffer, cheap to collect); nor are those above MAX_POOLED_BYTES, so one
 * huge use cannot pin huge buffers.
 *
 * Invariants:
 * - A buffer is lent to one holder at a time: `lend` hands out only buffers that
 *   came back, each lease comes back at most once (`release` is idempotent), and
 *   nothing is taken back after `close`.
 * - Each size keeps at most `maxFreePerSize` free buffers and all sizes together at
 *   most `maxFreeBytes`; a size lent from nowhere between two `trimIfIdle` calls drops
 *   its free buffers (an idle process gives its memory back).
 * - A lent Buffer is exactly the length asked for, with unspecified contents: the
 *   holder fills it before anything reads it.
 *
 * Single-threaded: a pool belongs to one thread.
 */

/** Reads shorter than this are not pooled: half the smallest size, the waste of any size. */
const MIN_POOLED_BYTES = 32 * 1024;
/** The smallest buffer size, 64 KiB: sizes are SMALLEST_SIZE_BYTES << k. */
const SMALLEST_SIZE_LOG2 = 16;
const SMALLEST_SIZE_BYTES = 1 << SMALLEST_SIZE_LOG2;
/** Longer buffers are not pooled: eight times Kafka's default max.partition.fetch.bytes. */
export const MAX_POOLED_BYTES = 8 * 1024 * 1024;
/** Default bounds of the free buffers: per size, and in all (four of the largest size). */
const MAX_FREE_PER_SIZE = 8;
const MAX_FREE_BYTES = 32 * 1024 * 1024;

export interface BufferPoolOptions {
  /** Free buffers kept per size (default 8). */
  maxFreePerSize?: number;
  /** Bytes free buffers may hold in all (default 32 MiB). */
  maxFreeBytes?: number;
}

/** One borrowed buffer; `release` (idempotent) says nothing will read it again. */
export interface BufferLease {
  readonly buffer: Buffer;
  /** False for a buffer of its own, which `release` leaves to the garbage collector. */
  readonly pooled: boolean;
  release(): void;
}

const unpooled = (length: number): BufferLease => ({
  buffer: Buffer.allocUnsafe(length),
  pooled: false,
  release: () => undefined,
});

interface SizeClass {
  readonly bytes: number;
  free: ArrayBuffer[];
  lentSinceTrim: boolean;
}

export class BufferPool {
  private readonly sizes: SizeClass[] = [];
  private freeBytes = 0;
  private lent = 0;
  private closed = false;
  private readonly maxFreePerSize: number;
  private readonly maxFreeBytes: number;

  constructor(options: BufferPoolOptions = {}) {
    this.maxFreePerSize = options.maxFreePerSize ?? MAX_FREE_PER_SIZE;
    this.maxFreeBytes = options.maxFreeBytes ?? MAX_FREE_BYTES;
    for (let bytes = SMALLEST_SIZE_BYTES; bytes <= MAX_POOLED_BYTES; bytes *= 2) {
      this.sizes.push({ bytes, free: [], lentSinceTrim: false });
    }
  }

  /** A buffer of exactly `length` bytes with unspecified contents. */
  lend(length: number): BufferLease {
    if (length < MIN_POOLED_BYTES || length > MAX_POOLED_BYTES || this.closed) {
      return unpooled(length);
    }
    // ceil(log2(length)) - log2(SMALLEST_SIZE_BYTES), at least 0.
    const size = this.sizes[Math.max(0, 32 - Math.clz32(length - 1) - SMALLEST_SIZE_LOG2)]!;
    size.lentSinceTrim = true;
    let buffer = size.free.pop();
    if (buffer === undefined) buffer = new ArrayBuffer(size.bytes);
    else this.freeBytes -= size.bytes;
    this.lent++;
    let released = false;
    return {
      buffer: Buffer.from(buffer, 0, length),
      pooled: true,
      release: () => {
        if (released) return;
        released = true;
        this.lent--;
        this.giveBack(size, buffer);
      },
    };
  }

  private giveBack(size: SizeClass, buffer: ArrayBuffer): void {
    if (
      this.closed ||
      size.free.length >= this.maxFreePerSize ||
      this.freeBytes + size.bytes > this.maxFreeBytes
    )
      return;
    size.free.push(buffer);
    this.freeBytes += size.bytes;
  }

  /** Drops the free buffers of every size nothing was lent from since the last call. */
  trimIfIdle(): void {
    for (const size of this.sizes) {
      if (!size.lentSinceTrim) {
        this.freeBytes -= size.free.length * size.bytes;
        size.free = [];
      }
      size.lentSinceTrim = false;
    }
  }

  /** Bytes held by buffers waiting for reuse. */
  get pooledBytes(): number {
    return this.freeBytes;
  }

  /** Pooled buffers lent and not yet released (tests, diagnostics). */
  get lentBuffers(): number {
    return this.lent;
  }

  close(): void {
    this.closed = true;
    for (const size of this.sizes) size.free = [];
    this.freeBytes = 0;
  }
}

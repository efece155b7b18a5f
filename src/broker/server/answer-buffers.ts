/**
 * Buffers that answers borrow and that come back once the socket has written them:
 * what a Fetch reads stored record batches into (log/segment.ts), since those bytes
 * go out uncopied as chunks of the response.
 *
 * Why: a consumer catching up makes one read of up to max.partition.fetch.bytes
 * (1 MB by default) per partition per Fetch. A fresh Buffer per read is garbage as
 * soon as the socket has written it, but V8 frees ArrayBuffers only when it collects,
 * and the broker thread collects rarely: tens of MB of dead reads piled up, each on
 * fresh pages the kernel had to fault in. Reused buffers stay few and warm.
 *
 * Two parts:
 * - AnswerBufferPool, one per socket server, shared by all its connections: the free
 *   buffers, in power-of-two sizes from SMALLEST_SIZE_BYTES to
 *   MAX_POOLED_READ_BYTES. Read lengths vary with what a consumer has left to read,
 *   so one size for all (as FramePool has for request frames) would hand a 1 MB
 *   buffer to a 40 KB read of a Fetch over many partitions; a size class wastes at
 *   most half its buffer. Reads below MIN_POOLED_BYTES are not pooled (Node serves
 *   those from its slab or a small ArrayBuffer, cheap to collect); nor are reads
 *   above MAX_POOLED_READ_BYTES, so one huge batch cannot pin huge buffers.
 * - AnswerHold, one per request: what that request's handler borrowed. The socket
 *   server gives it back in the callback of the answer's last socket.write, which
 *   Node calls once libuv has handed the bytes to the kernel, or has cancelled the
 *   write because the socket was destroyed (libuv's uv__stream_destroy completes
 *   every queued write before the handle's close callback, so before 'close'); a
 *   write Node never passed to libuv gets ERR_STREAM_DESTROYED. Either way libuv no
 *   longer reads the memory. An answer that is never written (null, a closed
 *   connection, a failed handler) gives its buffers back once its handler is done.
 *
 * Invariants:
 * - A buffer is lent to one holder at a time: `lend` hands out only buffers that
 *   came back, each lease comes back at most once (`release` is idempotent), and
 *   nothing is taken back after `close`.
 * - Each size keeps at most MAX_FREE_PER_SIZE free buffers and all sizes together
 *   at most MAX_FREE_BYTES; a size lent from nowhere between two `trimIfIdle` calls
 *   drops its free buffers (an idle broker gives its memory back).
 * - A lent Buffer is exactly the length asked for and a read fills all of it (or is
 *   cut to what it read), so the stale bytes beyond it, left by an earlier read of
 *   any partition, never leave the broker.
 *
 * Single-threaded: used on the broker thread only.
 */

/** Reads shorter than this are not pooled: half the smallest size, the waste of any size. */
const MIN_POOLED_BYTES = 32 * 1024;
/** The smallest buffer size, 64 KiB: sizes are SMALLEST_SIZE_BYTES << k. */
const SMALLEST_SIZE_LOG2 = 16;
const SMALLEST_SIZE_BYTES = 1 << SMALLEST_SIZE_LOG2;
/** Reads longer than this are not pooled: eight times Kafka's default max.partition.fetch.bytes. */
export const MAX_POOLED_READ_BYTES = 8 * 1024 * 1024;
/** A Fetch over several partitions borrows several buffers at once; a few consumers share them. */
const MAX_FREE_PER_SIZE = 8;
/** What free buffers may hold in all: four of the largest size. */
const MAX_FREE_BYTES = 32 * 1024 * 1024;

/** One borrowed buffer; `release` (idempotent) says nothing will read it again. */
export interface AnswerBufferLease {
  readonly buffer: Buffer;
  /** False for a buffer of its own, which `release` leaves to the garbage collector. */
  readonly pooled: boolean;
  release(): void;
}

const unpooled = (length: number): AnswerBufferLease => ({
  buffer: Buffer.allocUnsafe(length),
  pooled: false,
  release: () => undefined,
});

interface SizeClass {
  readonly bytes: number;
  free: ArrayBuffer[];
  lentSinceTrim: boolean;
}

export class AnswerBufferPool {
  private readonly sizes: SizeClass[] = [];
  private freeBytes = 0;
  private lent = 0;
  private closed = false;

  constructor() {
    for (let bytes = SMALLEST_SIZE_BYTES; bytes <= MAX_POOLED_READ_BYTES; bytes *= 2) {
      this.sizes.push({ bytes, free: [], lentSinceTrim: false });
    }
  }

  /** A buffer of exactly `length` bytes with unspecified contents. */
  lend(length: number): AnswerBufferLease {
    if (length < MIN_POOLED_BYTES || length > MAX_POOLED_READ_BYTES || this.closed) {
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
      size.free.length >= MAX_FREE_PER_SIZE ||
      this.freeBytes + size.bytes > MAX_FREE_BYTES
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

/**
 * What one request's handler may borrow for its answer (ConnectionInfo.answerBuffers).
 * A handler puts lent buffers, or views of them, only into its own answer: they go
 * back to the pool once that answer is written, and must not be kept past it.
 */
export interface AnswerBuffers {
  /** A buffer of exactly `length` bytes with unspecified contents. */
  lend(length: number): Buffer;
  /**
   * Gives back before the answer is written a buffer that `lend` returned (or a view
   * of one) and that nothing will read again; other buffers are ignored.
   */
  giveBack(buffer: Buffer): void;
}

/** The buffers one answer holds; the socket server releases them all once it is written. */
export class AnswerHold implements AnswerBuffers {
  private leases: AnswerBufferLease[] | undefined;
  private released = false;

  constructor(private readonly pool: AnswerBufferPool) {}

  /** True while the hold has buffers its answer's write must wait for. */
  get holdsBuffers(): boolean {
    return this.leases !== undefined && this.leases.length > 0;
  }

  lend(length: number): Buffer {
    // Borrowing after the release would never come back: such a buffer is not pooled.
    if (this.released) return Buffer.allocUnsafe(length);
    const lease = this.pool.lend(length);
    if (!lease.pooled) return lease.buffer;
    if (this.leases === undefined) this.leases = [lease];
    else this.leases.push(lease);
    return lease.buffer;
  }

  giveBack(buffer: Buffer): void {
    const leases = this.leases;
    if (leases === undefined) return;
    const i = leases.findIndex((l) => l.buffer.buffer === buffer.buffer);
    if (i < 0) return;
    leases[i]!.release();
    leases.splice(i, 1);
  }

  /** The answer was written, or never will be: every buffer goes back, once. */
  releaseAll(): void {
    if (this.released) return;
    this.released = true;
    const leases = this.leases;
    this.leases = undefined;
    if (leases) for (const l of leases) l.release();
  }
}

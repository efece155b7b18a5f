/**
 * The request frame buffers of one connection, lent to the handler and taken back
 * for the next frame once the handler says it holds no view of them any more.
 *
 * Why: a producer sending 1 MB requests at full speed would otherwise make the
 * broker allocate one 1 MB ArrayBuffer per request. They are garbage as soon as the
 * request is appended, but V8 frees ArrayBuffers only when it collects, and the
 * broker thread allocates so few JS objects that it rarely does: tens of MB of dead
 * frames piled up between collections. Reused frames keep the broker's buffer
 * memory at a few frames per producing connection, and warm.
 *
 * Invariants:
 * - A buffer is lent to one frame at a time: `lend` hands out only buffers whose
 *   lease was released, each lease releases at most once, and nothing is taken back
 *   after `close`.
 * - Buffers have one capacity, the largest frame lent so far rounded up to
 *   `GRANULE_BYTES`; a larger frame raises it and the smaller buffers are dropped as
 *   they come back. Frames above `MAX_POOLED_FRAME_BYTES` get a buffer of their own
 *   that is never pooled, so one huge request cannot pin huge buffers.
 * - At most `MAX_FREE_BUFFERS` buffers wait for reuse; a connection that lent
 *   nothing between two `trimIfIdle` calls drops them all (an idle broker gives its
 *   memory back), and `close` drops them for good.
 * - Buffers never move between connections: whatever stale bytes lie beyond a
 *   frame's end in its buffer came from the same client.
 *
 * Single-threaded: used by one connection on the broker thread.
 */

/** Capacities are rounded up to this, so requests of varying size still share buffers. */
const GRANULE_BYTES = 64 * 1024;
/** Frames larger than this are not pooled: eight times Kafka's default max.request.size. */
export const MAX_POOLED_FRAME_BYTES = 8 * 1024 * 1024;
/** Kafka clients keep up to 5 requests in flight: their frames, the one being read, slack. */
const MAX_FREE_BUFFERS = 8;

/** One frame's buffer; `release` (idempotent) says the holder keeps no view of it. */
export interface FrameLease {
  readonly frame: Buffer;
  release(): void;
}

export class FramePool {
  private free: ArrayBuffer[] = [];
  private capacity = 0;
  private lentSinceTrim = false;
  private closed = false;

  /** A frame of exactly `size` bytes with unspecified contents. */
  lend(size: number): FrameLease {
    this.lentSinceTrim = true;
    if (size > MAX_POOLED_FRAME_BYTES || this.closed) {
      return { frame: Buffer.allocUnsafeSlow(size), release: () => undefined };
    }
    if (size > this.capacity) {
      this.capacity = Math.ceil(size / GRANULE_BYTES) * GRANULE_BYTES;
      this.free = [];
    }
    const buffer = this.free.pop() ?? new ArrayBuffer(this.capacity);
    let released = false;
    return {
      frame: Buffer.from(buffer, 0, size),
      release: () => {
        if (released) return;
        released = true;
        this.giveBack(buffer);
      },
    };
  }

  private giveBack(buffer: ArrayBuffer): void {
    if (this.closed || buffer.byteLength !== this.capacity || this.free.length >= MAX_FREE_BUFFERS)
      return;
    this.free.push(buffer);
  }

  /** Drops the waiting buffers when nothing was lent since the last call. */
  trimIfIdle(): void {
    if (!this.lentSinceTrim) {
      this.free = [];
      this.capacity = 0;
    }
    this.lentSinceTrim = false;
  }

  /** Bytes held by buffers waiting for reuse. */
  get pooledBytes(): number {
    return this.free.length * this.capacity;
  }

  close(): void {
    this.closed = true;
    this.free = [];
  }
}

/**
 * What an answer borrows and gives back once the socket has written it: the records a
 * Fetch reads stored batches into (log/segment.ts), since those bytes go out uncopied
 * as chunks of the response. The buffers come from the socket server's BufferPool
 * (util/buffer-pool.ts), shared by all its connections.
 *
 * AnswerHold, one per request, is what that request's handler borrowed. The socket
 * server gives it back in the callback of the answer's last socket.write, which Node
 * calls once libuv has handed the bytes to the kernel, or has cancelled the write
 * because the socket was destroyed (libuv's uv__stream_destroy completes every queued
 * write before the handle's close callback, so before 'close'); a write Node never
 * passed to libuv gets ERR_STREAM_DESTROYED. Either way libuv no longer reads the
 * memory. An answer that is never written (null, a closed connection, a failed
 * handler) gives its buffers back once its handler is done.
 *
 * Single-threaded: used on the broker thread only.
 */
import type { BufferLease, BufferPool } from '../../util/buffer-pool.ts';

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
  private leases: BufferLease[] | undefined;
  private released = false;

  constructor(private readonly pool: BufferPool) {}

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

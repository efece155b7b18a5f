/**
 * Where a rotated file is encoded: a large one on an encoder thread of the process's
 * pool (encoder-thread.ts) when one is loaded and idle, every other one on the task's
 * thread. Small files are not worth the round trip; and a file that would
 * queue behind another one (records arriving faster than one thread encodes, or the
 * thread still loading) is encoded by the task's thread meanwhile, so both cores
 * encode rather than one waiting for the other. Both give the same bytes
 * (parquet-encoder.ts is pure), so where a file was encoded never shows in the store
 * and replays stay identical.
 *
 * encode() always answers with a promise: an inline encoding has already run when it
 * returns (its error, if any, is the rejection). Where or when a file finished
 * encoding never changes the upload order, which is the order groups closed
 * (topic-partition-writer.ts).
 */
import { type EncoderPool, sharedEncoderPool } from './encoder-thread.ts';
import { type EncodedSchema, type EncodeOptions, encodeParquet } from './parquet-encoder.ts';
import type { BufferedColumns } from './row-buffer.ts';

/**
 * Files whose buffered rows are estimated below this are encoded inline. Flat buffers
 * count their typed arrays: about 40 bytes per CDC row, so some 25,000 rows and 6 ms of
 * encoding, and they move to the thread by transfer. Nested buffers count their JS
 * values: about 8,000 rows and 10 ms with hyparquet-writer, against the ~1 ms their
 * structured clone takes.
 */
export const OFF_THREAD_MIN_BYTES = 1024 * 1024;

/** `auto` as above; tests force one side with `thread` (waiting for it) or `inline`. */
export type EncoderPlacement = 'auto' | 'thread' | 'inline';

export class FileEncoder {
  constructor(
    private readonly placement: EncoderPlacement = 'auto',
    private readonly pool: EncoderPool = sharedEncoderPool(),
  ) {}

  /** Start an encoder thread ahead of the first large file (flush.size says one will come). */
  prepare(): void {
    if (this.placement !== 'inline') this.pool.prepare();
  }

  encode(
    schema: EncodedSchema,
    columns: BufferedColumns,
    estimatedBytes: number,
    options: EncodeOptions,
  ): Promise<Uint8Array> {
    const large = this.placement === 'auto' && estimatedBytes >= OFF_THREAD_MIN_BYTES;
    const thread =
      this.placement === 'thread' ? this.pool.leastBusy() : large ? this.pool.idle() : undefined;
    if (thread !== undefined) return thread.encode(schema, columns, options);
    if (large) this.pool.grow();
    try {
      return Promise.resolve(encodeParquet(schema, columns, options));
    } catch (e) {
      // The same message as from the thread, wherever the file was encoded.
      return Promise.reject(
        new Error(`Parquet encoding failed: ${(e as Error)?.message ?? String(e)}`, { cause: e }),
      );
    }
  }
}

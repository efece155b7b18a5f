/**
 * A worker thread that turns buffered columns into Parquet file bytes, so encoding and
 * compressing a rotated file (the sink's largest CPU cost after JSON decoding) runs on
 * the machine's other core while the task's thread goes on consuming.
 *
 * Protocol: the thread first says `{ ready }` once its modules are loaded. The task
 * posts an EncodeRequest (schema elements, column names, the buffered columns, codec
 * and footer metadata) and gets a reply with the same id: the file's bytes, their
 * buffer transferred, or the error message. Replies come in request order. Flat
 * columns' typed arrays are transferred, not copied (the buffer is done with them);
 * columns of JS values are structured-cloned.
 *
 * Lifecycle: the thread starts on the first encode() (or prepare()) and is unref'd
 * while no job waits, so an idle encoder never keeps the process alive. If the thread
 * dies, every waiting job is rejected and the next encode() starts a new one.
 *
 * Sharing: the threads belong to the process, not to a task (EncoderPool,
 * sharedEncoderPool). Every sink task of a worker encodes on the same few threads, at
 * most one fewer than the machine's cores: a worker running twenty sink tasks does not
 * hold twenty threads and their heaps, and a task started again after a rebalance
 * finds the encoder loaded and its code already optimized. A stopped task does not
 * stop them; a file it left encoding finishes and is dropped. All users are on the
 * process's main thread, where the sink tasks run.
 */
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import type { SchemaElement } from 'hyparquet-writer';
import { startThread } from '../../src/connect/api/index.ts';
import type { EncodedSchema, EncodeOptions } from './parquet-encoder.ts';
import type { BufferedColumns } from './row-buffer.ts';

export interface EncodeRequest {
  id: number;
  elements: SchemaElement[];
  names: string[];
  columns: BufferedColumns;
  options: EncodeOptions;
}

export type EncoderMessage =
  | { ready: true }
  | { id: number; bytes: Uint8Array }
  | { id: number; error: string };

interface Job {
  resolve(bytes: Uint8Array): void;
  reject(error: Error): void;
}

export class EncoderThread {
  private worker: Worker | undefined;
  private readonly jobs = new Map<number, Job>();
  private nextId = 0;
  private ready = false;

  /** Started, loaded and with no file in progress: a file given now starts at once. */
  get idle(): boolean {
    return this.worker !== undefined && this.ready && this.jobs.size === 0;
  }

  get started(): boolean {
    return this.worker !== undefined;
  }

  /** Started and still loading its modules. */
  get loading(): boolean {
    return this.worker !== undefined && !this.ready;
  }

  /** Files given and not answered yet. */
  get pending(): number {
    return this.jobs.size;
  }

  /** Start the thread now, so that loading it does not delay the first file. */
  prepare(): void {
    this.worker ??= this.start();
  }

  encode(
    schema: EncodedSchema,
    columns: BufferedColumns,
    options: EncodeOptions,
  ): Promise<Uint8Array> {
    const worker = this.worker ?? this.start();
    this.worker = worker;
    const id = this.nextId++;
    return new Promise<Uint8Array>((resolve, reject) => {
      const request: EncodeRequest = {
        id,
        elements: schema.elements,
        names: schema.columns.map((c) => c.name),
        columns,
        options,
      };
      try {
        worker.postMessage(request, transferList(columns));
      } catch (e) {
        reject(e as Error); // a value that cannot be cloned
        return;
      }
      this.jobs.set(id, { resolve, reject });
      if (this.jobs.size === 1) worker.ref();
    });
  }

  private start(): Worker {
    const entry = new URL('./encoder-thread-main.ts', import.meta.url);
    const worker = startThread(entry, null, { name: 'parquet-encoder' });
    worker.unref();
    worker.on('message', (reply: EncoderMessage) => {
      if ('ready' in reply) {
        if (this.worker === worker) this.ready = true;
        return;
      }
      const job = this.jobs.get(reply.id);
      if (job === undefined) return;
      this.jobs.delete(reply.id);
      if (this.jobs.size === 0) worker.unref();
      if ('bytes' in reply) job.resolve(reply.bytes);
      else job.reject(new Error(`Parquet encoding failed: ${reply.error}`));
    });
    worker.on('error', (err) => {
      if (this.worker === worker) this.forget();
      this.rejectAll(new Error(`the Parquet encoder thread failed: ${err.message}`));
    });
    worker.on('exit', (code) => {
      if (this.worker === worker) this.forget();
      this.rejectAll(new Error(`the Parquet encoder thread exited with code ${code}`));
    });
    return worker;
  }

  private forget(): void {
    this.worker = undefined;
    this.ready = false;
  }

  private rejectAll(error: Error): void {
    const jobs = [...this.jobs.values()];
    this.jobs.clear();
    for (const job of jobs) job.reject(error);
  }
}

/** Encoder threads shared by every sink task that uses the pool (see the file comment). */
export class EncoderPool {
  private readonly threads: EncoderThread[];

  constructor(size: number) {
    this.threads = Array.from({ length: Math.max(1, size) }, () => new EncoderThread());
  }

  /** Threads started so far (they start on demand, up to the pool's size). */
  get started(): number {
    return this.threads.filter((t) => t.started).length;
  }

  /** A loaded thread with no file in progress, if there is one. */
  idle(): EncoderThread | undefined {
    return this.threads.find((t) => t.idle);
  }

  /** The started thread with the fewest files waiting (starting the first if none is). */
  leastBusy(): EncoderThread {
    const started = this.threads.filter((t) => t.started);
    if (started.length === 0) {
      const first = this.threads[0] as EncoderThread;
      first.prepare();
      return first;
    }
    return started.reduce((a, b) => (b.pending < a.pending ? b : a));
  }

  /** Start the first thread ahead of the first large file. */
  prepare(): void {
    this.threads[0]?.prepare();
  }

  /**
   * Large files are coming and no thread is idle: start one more, unless one is
   * still loading (it will take the next file) or the pool is at its size.
   */
  grow(): void {
    if (this.threads.some((t) => t.loading)) return;
    this.threads.find((t) => !t.started)?.prepare();
  }
}

let shared: EncoderPool | undefined;

/**
 * The process's encoder threads: one fewer than the cores (the other runs the tasks
 * themselves), and at least one.
 */
export function sharedEncoderPool(): EncoderPool {
  shared ??= new EncoderPool(availableParallelism() - 1);
  return shared;
}

/** The distinct buffers under a flat buffer's typed arrays (none for JS values). */
function transferList(columns: BufferedColumns): ArrayBuffer[] {
  if (columns.layout !== 'flat') return [];
  const buffers = new Set<ArrayBuffer>();
  const add = (a: ArrayBufferView | undefined) => {
    if (a !== undefined) buffers.add(a.buffer as ArrayBuffer);
  };
  for (const c of columns.columns) {
    add(c.nulls);
    if (c.kind === 'dictionary') {
      add(c.indices);
      add(c.dictionary.data);
      add(c.dictionary.offsets);
    } else if (c.kind === 'plain') {
      add(c.strings.data);
      add(c.strings.offsets);
    } else {
      add(c.values);
    }
  }
  return [...buffers];
}

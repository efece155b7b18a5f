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
 * close() terminates it and rejects what still waits. Used from one task's thread only.
 */
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

  async close(): Promise<void> {
    const worker = this.worker;
    this.forget();
    if (worker !== undefined) await worker.terminate();
    this.rejectAll(new Error('the Parquet encoder thread was stopped'));
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

/**
 * FileStreamSourceTask: tails a file and produces each complete line as a record
 * (string value, no key) to one topic, like Kafka's FileStreamSourceTask.
 *
 * Offsets, as Kafka writes them: source partition `{ filename }`, source offset
 * `{ position }` = the byte position just after the line (its terminator included).
 * On start the task seeks to the committed position, so after a restart it resumes at
 * the first line whose record was not committed: lines are neither lost nor
 * duplicated by a clean stop; after a crash, lines produced but not yet committed
 * are produced again (at-least-once).
 *
 * Lines end at \n, \r or \r\n; an unterminated last line waits for its terminator. A
 * missing file is waited for. Bytes are split into lines before UTF-8 decoding, so
 * multi-byte characters never straddle a read. poll() waits up to a second for data
 * (woken at once by a change to the file or by stop()).
 */

import { type FSWatcher, watch } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import {
  type Clock,
  ConnectException,
  parseConfigOrThrow,
  Schemas,
  type SourceRecord,
  type SourceTask,
  type SourceTaskContext,
  type TaskConfig,
  Wakeup,
} from '../../src/connect/api/index.ts';
import { sourceConfigDefs } from './file-stream-config.ts';
import { FILE_CONNECTOR_VERSION } from './version.ts';

const VALUE_SCHEMA = Schemas.string();
/** How long an idle poll waits before returning empty (the contract's "about a second"). */
const IDLE_WAIT_MS = 1000;
const READ_CHUNK = 64 * 1024;
const LF = 0x0a;
const CR = 0x0d;

export class FileStreamSourceTask implements SourceTask {
  private filename = '';
  private topic = '';
  private batchSize = 2000;
  private clock!: Clock;
  private handle: FileHandle | null = null;
  private watcher: FSWatcher | null = null;
  /** Byte position in the file of the first byte of `pending`. */
  private position = 0;
  /** Bytes read but not yet consumed as complete lines. */
  private pending: Buffer = Buffer.alloc(0);
  private stopped = false;
  private readonly wakeup = new Wakeup();

  version(): string {
    return FILE_CONNECTOR_VERSION;
  }

  async start(config: TaskConfig, context: SourceTaskContext): Promise<void> {
    const { values } = parseConfigOrThrow(sourceConfigDefs, config);
    this.filename = values.file as string;
    this.topic = values.topic as string;
    this.batchSize = values['batch.size'] as number;
    this.clock = context.clock;
    const committed = await context.offsetStorageReader.offset({ filename: this.filename });
    const position = committed?.position;
    if (position !== undefined && position !== null) {
      const n = Number(position);
      if (!Number.isSafeInteger(n) || n < 0) {
        throw new ConnectException(
          `Offset position ${String(position)} for ${this.filename} is not a byte position`,
        );
      }
      this.position = n;
    }
  }

  async poll(): Promise<SourceRecord[] | null> {
    if (this.stopped) return null;
    if (!(await this.ensureOpen())) {
      await this.wakeup.wait(IDLE_WAIT_MS);
      return null;
    }
    let records = this.extractLines();
    if (records.length === 0) {
      await this.readMore();
      records = this.extractLines();
    }
    if (records.length === 0 && !this.stopped) {
      await this.wakeup.wait(IDLE_WAIT_MS);
      await this.readMore();
      records = this.extractLines();
    }
    return records.length > 0 ? records : null;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeup.wake();
    this.watcher?.close();
    this.watcher = null;
    const handle = this.handle;
    this.handle = null;
    await handle?.close();
  }

  /** Open the file (once it exists) and watch it for appends. */
  private async ensureOpen(): Promise<boolean> {
    if (this.handle !== null) return true;
    try {
      this.handle = await open(this.filename, 'r');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw new ConnectException(`Couldn't open ${this.filename}: ${(e as Error).message}`, {
        cause: e,
      });
    }
    if (this.stopped) {
      await this.handle.close();
      this.handle = null;
      return false;
    }
    this.watcher = watch(this.filename, { persistent: false }, () => this.wakeup.wake());
    this.watcher.on('error', () => this.wakeup.wake());
    return true;
  }

  /** Append the bytes after `pending` that the file holds now. */
  private async readMore(): Promise<void> {
    const handle = this.handle;
    if (handle === null || this.stopped) return;
    const chunks: Buffer[] = [this.pending];
    let at = this.position + this.pending.length;
    for (;;) {
      const buf = Buffer.allocUnsafe(READ_CHUNK);
      let bytesRead: number;
      try {
        ({ bytesRead } = await handle.read(buf, 0, READ_CHUNK, at));
      } catch (e) {
        // stop() closed the handle under a read in flight: the poll just ends empty.
        if (this.stopped) return;
        throw new ConnectException(`Error reading ${this.filename}: ${(e as Error).message}`, {
          cause: e,
        });
      }
      if (bytesRead === 0) break;
      chunks.push(buf.subarray(0, bytesRead));
      at += bytesRead;
      if (bytesRead < READ_CHUNK) break;
    }
    if (chunks.length > 1) this.pending = Buffer.concat(chunks);
  }

  /** Up to batch.size complete lines from `pending`, advancing `position`. */
  private extractLines(): SourceRecord[] {
    const records: SourceRecord[] = [];
    const buf = this.pending;
    let start = 0;
    while (records.length < this.batchSize) {
      let end = start;
      while (end < buf.length && buf[end] !== LF && buf[end] !== CR) end++;
      if (end >= buf.length) break;
      let next = end + 1;
      if (buf[end] === CR) {
        // A CR at the very end may be the first half of CRLF: wait for the next byte.
        if (next >= buf.length) break;
        if (buf[next] === LF) next++;
      }
      const line = buf.toString('utf8', start, end);
      records.push({
        topic: this.topic,
        sourcePartition: { filename: this.filename },
        sourceOffset: { position: this.position + next },
        valueSchema: VALUE_SCHEMA,
        value: line,
        timestamp: this.clock.now(),
      });
      start = next;
    }
    if (start > 0) {
      this.pending = buf.subarray(start);
      this.position += start;
    }
    return records;
  }
}

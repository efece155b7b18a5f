/**
 * FileStreamSinkTask: appends each record's value as one line to a file (or standard
 * output), like Kafka's FileStreamSinkTask. put() writes through to the OS; preCommit
 * fsyncs before handing back the offsets, so a committed offset always means the
 * lines up to it are on disk. After a crash, lines written after the last commit are
 * written again on redelivery (at-least-once).
 *
 * A value is written as its text: strings as they are, bytes as UTF-8, numbers and
 * booleans as printed, null as "null" (as Java's println does), structs and maps as
 * JSON.
 */
import { type FileHandle, open } from 'node:fs/promises';
import {
  ConnectException,
  parseConfigOrThrow,
  type SinkRecord,
  type SinkTask,
  type TaskConfig,
  type TopicPartitionOffset,
} from '../../src/connect/api/index.ts';
import { sinkConfigDefs } from './file-stream-config.ts';
import { FILE_CONNECTOR_VERSION } from './version.ts';

export class FileStreamSinkTask implements SinkTask {
  private filename: string | null = null;
  private handle: FileHandle | null = null;

  version(): string {
    return FILE_CONNECTOR_VERSION;
  }

  async start(config: TaskConfig): Promise<void> {
    const { values } = parseConfigOrThrow(sinkConfigDefs, config);
    this.filename = values.file as string | null;
    if (this.filename === null) return;
    try {
      this.handle = await open(this.filename, 'a');
    } catch (e) {
      throw new ConnectException(
        `Couldn't find or create file '${this.filename}' for FileStreamSinkTask: ${(e as Error).message}`,
        { cause: e },
      );
    }
  }

  async put(records: readonly SinkRecord[]): Promise<void> {
    if (records.length === 0) return;
    let text = '';
    for (const r of records) text += `${lineOf(r.value)}\n`;
    if (this.handle === null) {
      process.stdout.write(text);
      return;
    }
    await this.handle.write(text);
  }

  async flush(): Promise<void> {
    await this.handle?.sync();
  }

  async preCommit(
    currentOffsets: readonly TopicPartitionOffset[],
  ): Promise<TopicPartitionOffset[]> {
    await this.flush();
    return [...currentOffsets];
  }

  async stop(): Promise<void> {
    const handle = this.handle;
    this.handle = null;
    if (handle === null) return;
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }
}

function lineOf(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return value;
  if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
  if (typeof value !== 'object') return String(value);
  return JSON.stringify(value, (_k, v) =>
    typeof v === 'bigint' ? v.toString() : v instanceof Map ? Object.fromEntries(v) : v,
  );
}

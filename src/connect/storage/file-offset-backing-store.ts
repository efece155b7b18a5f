/**
 * FileOffsetBackingStore: standalone mode's source offsets, in the file named by
 * `offset.storage.file.filename`.
 *
 * Format (ours; Kafka's file is a Java-serialized HashMap no other tool reads): UTF-8
 * JSON `{"version":1,"offsets":[[key,value],...]}` where key and value are the texts
 * the internal JSON converter wrote, i.e. Kafka Connect's layout
 * `["<connector>",{<source partition>}]` -> `{<source offset>}`, so the file can be
 * read, diffed and edited with ordinary tools.
 *
 * Invariants and crash behaviour: every `set` rewrites the whole file through a temp
 * file in the same folder that is fsynced and renamed over the old one (then the folder
 * is fsynced), so after a crash the file holds either the previous or the new map,
 * never a torn mix. `set` resolves after the rename is durable. Writes are serialised
 * (one at a time, in call order), so a slower earlier write never overwrites a later
 * one. A file that does not parse is refused at start with its path and the reason
 * (CorruptOffsetFileError) rather than silently treated as empty, which would replay
 * every source from the beginning.
 */
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { MemoryOffsetBackingStore } from './memory-offset-backing-store.ts';

const FORMAT_VERSION = 1;

export class CorruptOffsetFileError extends Error {
  readonly kind = 'corrupt-offset-file';
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(
      `Offset file ${path} cannot be read: ${reason}. Fix or remove it (removing replays sources from their start).`,
    );
    this.name = 'CorruptOffsetFileError';
  }
}

export class FileOffsetBackingStore extends MemoryOffsetBackingStore {
  private writing: Promise<void> = Promise.resolve();
  private seq = 0;

  constructor(readonly path: string) {
    super();
  }

  override async start(): Promise<void> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw e;
    }
    this.data = parseOffsetFile(this.path, text);
  }

  override async stop(): Promise<void> {
    await this.writing;
  }

  override set(entries: ReadonlyMap<string, string | null>): Promise<void> {
    this.apply(entries);
    // Each write persists the map as it is when the write starts, after the previous
    // write finished: the last write always holds every applied entry.
    const next = this.writing.then(() => this.persist());
    this.writing = next.catch(() => {});
    return next;
  }

  private async persist(): Promise<void> {
    const dir = dirname(this.path);
    await mkdir(dir, { recursive: true });
    const tmp = join(dir, `.${basename(this.path)}.${process.pid}.${this.seq++}.tmp`);
    const body = JSON.stringify({ version: FORMAT_VERSION, offsets: [...this.data] });
    try {
      const handle = await open(tmp, 'w');
      try {
        await handle.writeFile(body, 'utf8');
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(tmp, this.path);
    } catch (e) {
      await rm(tmp, { force: true });
      throw e;
    }
    // The rename is durable only once the folder's entry is.
    const dirHandle = await open(dir, 'r');
    try {
      await dirHandle.sync();
    } finally {
      await dirHandle.close();
    }
  }
}

function parseOffsetFile(path: string, text: string): Map<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new CorruptOffsetFileError(path, `not JSON (${(e as Error).message})`);
  }
  const doc = parsed as { version?: unknown; offsets?: unknown };
  if (typeof doc !== 'object' || doc === null || doc.version !== FORMAT_VERSION) {
    throw new CorruptOffsetFileError(
      path,
      `expected {"version":${FORMAT_VERSION},"offsets":[...]}`,
    );
  }
  if (!Array.isArray(doc.offsets))
    throw new CorruptOffsetFileError(path, 'offsets is not an array');
  const data = new Map<string, string>();
  for (const entry of doc.offsets) {
    if (
      !Array.isArray(entry) ||
      entry.length !== 2 ||
      typeof entry[0] !== 'string' ||
      typeof entry[1] !== 'string'
    ) {
      throw new CorruptOffsetFileError(path, `entry ${JSON.stringify(entry)} is not [key, value]`);
    }
    data.set(entry[0], entry[1]);
  }
  return data;
}

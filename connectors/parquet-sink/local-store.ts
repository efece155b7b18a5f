/**
 * A local folder as the object store (`store.url=file:///path`).
 *
 * put(key): write `<dir>/.<name>.<pid>-<n>.tmp`, fsync it, rename over `<dir>/<name>`,
 * fsync the folder. Rename is atomic on POSIX file systems, so readers see the old
 * file or the new one, never a torn one; the folder fsync makes the new name survive
 * power loss. A crash before the rename leaves a hidden temporary file that list()
 * skips (names starting with '.') and that readers such as DuckDB and Spark skip too;
 * discardIncomplete() removes those of a partition when the sink recovers it.
 *
 * Metadata (ObjectInfo.metadata, row-format files' commit groups): a hidden file
 * `<dir>/.<name>.meta` (JSON) beside the object, written the same way and renamed into
 * place before the object, so an object visible under its name always has the
 * metadata it was put with (a crash between the two renames leaves the new metadata
 * beside the old object of the same name, which a replay rewrites with the same
 * group). list() skips it as every hidden file; its name ends in `.meta`, not
 * in a format's extension, so readers globbing `*.json` under the folders (DuckDB matches hidden
 * files too) do not take it for data.
 */
import { mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ObjectInfo, type ObjectStore, StoreError } from './object-store.ts';

let tmpCounter = 0;

function metadataPath(target: string): string {
  const dir = dirname(target);
  return join(dir, `.${target.slice(dir.length + 1)}.meta`);
}

export class LocalStore implements ObjectStore {
  readonly root: string;
  readonly description: string;

  constructor(url: string) {
    if (!url.startsWith('file:')) {
      throw new StoreError(`store.url '${url}' is not a file:// URL`, false);
    }
    this.root = fileURLToPath(url);
    this.description = url;
  }

  async check(): Promise<void> {
    try {
      await mkdir(this.root, { recursive: true });
    } catch (e) {
      throw new StoreError(`cannot create ${this.root}: ${(e as Error).message}`, false, {
        cause: e,
      });
    }
  }

  private path(key: string): string {
    const path = join(this.root, ...key.split('/'));
    if (!path.startsWith(this.root + sep)) {
      throw new StoreError(`object key '${key}' escapes the store folder`, false);
    }
    return path;
  }

  async put(key: string, bytes: Uint8Array, info?: ObjectInfo): Promise<void> {
    const target = this.path(key);
    if (info?.metadata !== undefined) {
      await this.write(metadataPath(target), Buffer.from(JSON.stringify(info.metadata)));
    }
    await this.write(target, bytes);
  }

  /** The metadata file beside the object; empty when there is none. */
  async readMetadata(key: string): Promise<Record<string, string>> {
    let text: string;
    try {
      text = await readFile(metadataPath(this.path(key)), 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw new StoreError(`cannot read the metadata of ${key}: ${(e as Error).message}`, false, {
        cause: e,
      });
    }
    return JSON.parse(text) as Record<string, string>;
  }

  /** Write `bytes` at `target` atomically and durably (see the header). */
  private async write(target: string, bytes: Uint8Array): Promise<void> {
    const dir = dirname(target);
    const tmp = join(dir, `.${target.slice(dir.length + 1)}.${process.pid}-${tmpCounter++}.tmp`);
    try {
      await mkdir(dir, { recursive: true });
      const file = await open(tmp, 'w');
      try {
        await file.writeFile(bytes);
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(tmp, target);
      const folder = await open(dir, 'r');
      try {
        await folder.sync();
      } finally {
        await folder.close();
      }
    } catch (e) {
      await rm(tmp, { force: true }).catch(() => undefined);
      const code = (e as NodeJS.ErrnoException).code;
      // Out of space or quota may clear up; permissions and bad paths will not.
      const retriable = code === 'ENOSPC' || code === 'EDQUOT' || code === 'EAGAIN';
      throw new StoreError(`cannot write ${target}: ${(e as Error).message}`, retriable, {
        cause: e,
      });
    }
  }

  async list(prefix: string): Promise<string[]> {
    const out: string[] = [];
    await this.walkFiles(prefix, (full, name) => {
      if (name.startsWith('.')) return;
      const key = relative(this.root, full).split(sep).join('/');
      if (key.startsWith(prefix)) out.push(key);
    });
    return out.sort();
  }

  /** Hidden `.<name>.<pid>-<n>.tmp` files of names starting with `namePrefix`. */
  async discardIncomplete(prefix: string, namePrefix: string): Promise<number> {
    const doomed: string[] = [];
    await this.walkFiles(prefix, (full, name) => {
      // `..<name>.meta.<pid>-<n>.tmp` is a metadata file's temporary.
      const hidden = name.startsWith('..') ? name.slice(1) : name;
      if (hidden.startsWith(`.${namePrefix}`) && name.endsWith('.tmp')) doomed.push(full);
    });
    for (const full of doomed) await rm(full, { force: true });
    return doomed.length;
  }

  /**
   * Every file below the deepest folder `prefix` names (hidden folders skipped), as
   * (path, file name); callers filter by the rest of the prefix.
   */
  private async walkFiles(
    prefix: string,
    visit: (full: string, name: string) => void,
  ): Promise<void> {
    const folder = prefix.slice(0, prefix.lastIndexOf('/') + 1);
    const start = folder === '' ? this.root : this.path(`${folder}x`).slice(0, -2);
    const walk = async (dir: string): Promise<void> => {
      let entries: import('node:fs').Dirent[];
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
        throw new StoreError(`cannot list ${dir}: ${(e as Error).message}`, false, { cause: e });
      }
      for (const entry of entries) {
        const full = join(dir, entry.name);
        if (entry.isDirectory()) {
          if (!entry.name.startsWith('.')) await walk(full);
        } else if (entry.isFile()) visit(full, entry.name);
      }
    };
    await walk(start);
  }

  async readTail(key: string, length: number): Promise<Uint8Array> {
    const path = this.path(key);
    const file = await open(path, 'r');
    try {
      const size = (await file.stat()).size;
      const n = Math.min(size, length);
      const buf = new Uint8Array(n);
      await file.read(buf, 0, n, size - n);
      return buf;
    } finally {
      await file.close();
    }
  }

  async get(key: string): Promise<Uint8Array> {
    return new Uint8Array(await readFile(this.path(key)));
  }

  async exists(key: string): Promise<boolean> {
    return stat(this.path(key)).then(
      () => true,
      () => false,
    );
  }

  async close(): Promise<void> {}
}

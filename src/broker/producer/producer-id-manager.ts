/**
 * Hands out producer ids for InitProducerId. Ids must never repeat across restarts
 * (a reused id could be mistaken for a retry of an old producer's batch), so ids are
 * reserved in blocks: the end of the current block is written durably (temp file,
 * fsync, rename) before any id from it is handed out. A crash wastes at most the
 * rest of one block.
 *
 * File: `<dataDir>/producer-ids.json` = `{ "nextBlockStart": <number> }`.
 * Single-threaded: called from the broker thread; `allocate` serializes block writes.
 */
import { open, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';

const BLOCK_SIZE = 1000;

export class ProducerIdManager {
  private next = 0;
  private blockEnd = 0;
  private reserving: Promise<void> | undefined;

  private constructor(private readonly file: string) {}

  static async open(dataDir: string): Promise<ProducerIdManager> {
    const manager = new ProducerIdManager(join(dataDir, 'producer-ids.json'));
    try {
      const stored = JSON.parse(await readFile(manager.file, 'utf8')) as { nextBlockStart: number };
      manager.next = manager.blockEnd = stored.nextBlockStart;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    return manager;
  }

  async allocate(): Promise<number> {
    while (this.next >= this.blockEnd) {
      this.reserving ??= this.reserveBlock().finally(() => {
        this.reserving = undefined;
      });
      await this.reserving;
    }
    return this.next++;
  }

  private async reserveBlock(): Promise<void> {
    const end = this.blockEnd + BLOCK_SIZE;
    const tmp = `${this.file}.tmp`;
    const handle = await open(tmp, 'w');
    try {
      await handle.writeFile(JSON.stringify({ nextBlockStart: end }));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, this.file);
    this.next = this.blockEnd;
    this.blockEnd = end;
  }
}

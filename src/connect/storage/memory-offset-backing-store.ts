/**
 * An OffsetBackingStore held in memory only: nothing survives the process. The base of
 * the file store (which persists the same map) and the store of unit tests.
 */
import type { OffsetBackingStore } from './offset-backing-store.ts';

export class MemoryOffsetBackingStore implements OffsetBackingStore {
  protected data = new Map<string, string>();

  async start(): Promise<void> {}

  async stop(): Promise<void> {}

  async get(keys: readonly string[]): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    for (const key of keys) {
      const value = this.data.get(key);
      if (value !== undefined) found.set(key, value);
    }
    return found;
  }

  async set(entries: ReadonlyMap<string, string | null>): Promise<void> {
    this.apply(entries);
  }

  async entries(): Promise<Map<string, string>> {
    return new Map(this.data);
  }

  protected apply(entries: ReadonlyMap<string, string | null>): void {
    for (const [key, value] of entries) {
      if (value === null) this.data.delete(key);
      else this.data.set(key, value);
    }
  }
}

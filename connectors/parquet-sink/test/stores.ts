/**
 * Object stores for the writer tests: one that fails chosen puts and passes everything
 * else to a real store, as a crash mid-upload or a briefly unreachable destination
 * would leave it (tests wrap a LocalStore, never a mock, so what did get written is
 * real files); and a store's whole content, to compare a replay with a clean run.
 */
import type { ObjectInfo, ObjectStore } from '../object-store.ts';
import { StoreError } from '../object-store.ts';

/** Decides a put's fate: the error to throw, or undefined to let it through. */
type PutFailure = (key: string, index: number) => Error | undefined;

class FailingStore implements ObjectStore {
  private puts = 0;
  constructor(
    private readonly inner: ObjectStore,
    private readonly failure: PutFailure,
  ) {}
  get description() {
    return this.inner.description;
  }
  check() {
    return this.inner.check();
  }
  async put(key: string, bytes: Uint8Array, info?: ObjectInfo) {
    const error = this.failure(key, this.puts++);
    if (error) throw error;
    await this.inner.put(key, bytes, info);
  }
  list(prefix: string) {
    return this.inner.list(prefix);
  }
  readTail(key: string, length: number) {
    return this.inner.readTail(key, length);
  }
  readMetadata(key: string) {
    return this.inner.readMetadata(key);
  }
  get(key: string) {
    return this.inner.get(key);
  }
  close() {
    return this.inner.close();
  }
}

/** Puts fail after `n` successes, as a crash mid-upload would leave the store. */
export function failAfter(inner: ObjectStore, n: number): ObjectStore {
  return new FailingStore(inner, (_, i) => (i >= n ? new Error('injected failure') : undefined));
}

/** The first `n` puts fail retriably, as a briefly unreachable destination's would. */
export function failFirst(inner: ObjectStore, n: number): ObjectStore {
  return new FailingStore(inner, (_, i) =>
    i < n ? new StoreError('store unavailable', true) : undefined,
  );
}

/** Every put of a key matching `failing` fails, as a crash there would. */
export function failPutsOf(inner: ObjectStore, failing: RegExp): ObjectStore {
  return new FailingStore(inner, (key) =>
    failing.test(key) ? new Error('injected failure') : undefined,
  );
}

/** Every object in a store with its bytes (base64), by key in key order. */
export async function snapshot(store: ObjectStore): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const key of (await store.list('')).sort()) {
    out.set(key, Buffer.from(await store.get(key)).toString('base64'));
  }
  return out;
}

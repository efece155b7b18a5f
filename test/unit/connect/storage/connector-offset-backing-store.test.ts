/**
 * ConnectorOffsetBackingStore, Kafka's rules for a connector with its own offsets
 * topic: reads prefer the connector's store and fall back to the worker's; writes go
 * tombstones-to-the-worker first, then everything to the connector's store, then the
 * values to the worker's; the worker's store is never written for a failed primary.
 */
import { describe, expect, it } from 'vitest';
import { ConnectorOffsetBackingStore } from '../../../../src/connect/storage/connector-offset-backing-store.ts';
import { MemoryOffsetBackingStore } from '../../../../src/connect/storage/memory-offset-backing-store.ts';
import { getLogger } from '../../../../src/util/logger.ts';

/** A memory store that records each set and can be told to fail. */
class RecordingStore extends MemoryOffsetBackingStore {
  readonly writes: Array<Record<string, string | null>> = [];
  fail = false;

  constructor(
    private readonly name: string,
    private readonly log: string[],
  ) {
    super();
  }

  override async set(entries: ReadonlyMap<string, string | null>): Promise<void> {
    this.log.push(this.name);
    if (this.fail) throw new Error(`${this.name} is down`);
    this.writes.push(Object.fromEntries(entries));
    await super.set(entries);
  }
}

function stores() {
  const log: string[] = [];
  const worker = new RecordingStore('worker', log);
  const own = new RecordingStore('connector', log);
  const store = new ConnectorOffsetBackingStore({
    primaryOffsetsTopic: 'own-offsets',
    workerStore: worker,
    connectorStore: own,
    logger: getLogger('test'),
    owner: 'connector c',
  });
  return { log, worker, own, store };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('ConnectorOffsetBackingStore', () => {
  it("reads the connector's topic first and the worker's for keys it lacks", async () => {
    const { worker, own, store } = stores();
    await worker.set(
      new Map([
        ['a', '1'],
        ['b', '1'],
      ]),
    );
    await own.set(
      new Map([
        ['b', '2'],
        ['c', '2'],
      ]),
    );
    expect(Object.fromEntries(await store.get(['a', 'b', 'c', 'd']))).toEqual({
      a: '1',
      b: '2',
      c: '2',
    });
    expect(Object.fromEntries(await store.entries())).toEqual({ a: '1', b: '2', c: '2' });
  });

  it("commits to the connector's topic and copies values to the worker's afterwards", async () => {
    const { log, worker, own, store } = stores();
    await store.set(new Map([['a', '5']]));
    await settle();
    expect(log).toEqual(['connector', 'worker']);
    expect(own.writes).toEqual([{ a: '5' }]);
    expect(worker.writes).toEqual([{ a: '5' }]);
  });

  it("writes tombstones to the worker's store before the connector's, so no old value shows through", async () => {
    const { log, worker, own, store } = stores();
    await worker.set(new Map([['a', 'old']]));
    log.length = 0;
    worker.writes.length = 0;
    await store.set(
      new Map<string, string | null>([
        ['a', null],
        ['b', '7'],
      ]),
    );
    await settle();
    expect(log).toEqual(['worker', 'connector', 'worker']);
    expect(worker.writes).toEqual([{ a: null }, { b: '7' }]);
    expect(own.writes).toEqual([{ a: null, b: '7' }]);
    expect(Object.fromEntries(await store.get(['a', 'b']))).toEqual({ b: '7' });
  });

  it("fails when the connector's topic refuses, and leaves the worker's store alone", async () => {
    const { worker, own, store } = stores();
    own.fail = true;
    await expect(store.set(new Map([['a', '1']]))).rejects.toThrow('connector is down');
    await settle();
    expect(worker.writes).toEqual([]);
  });

  it("only logs a failed copy to the worker's store: the commit stands", async () => {
    const { worker, own, store } = stores();
    worker.fail = true;
    await store.set(new Map([['a', '1']]));
    await settle();
    expect(own.writes).toEqual([{ a: '1' }]);
  });

  it("without a connector topic it is the worker's store alone", async () => {
    const worker = new MemoryOffsetBackingStore();
    const store = new ConnectorOffsetBackingStore({
      primaryOffsetsTopic: 'connect-offsets',
      workerStore: worker,
      connectorStore: null,
      logger: getLogger('test'),
      owner: 'connector c',
    });
    await store.set(new Map<string, string | null>([['a', '1']]));
    expect(Object.fromEntries(await worker.entries())).toEqual({ a: '1' });
    expect(store.hasConnectorStore).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import {
  ConnectorOffsetReader,
  connectorOffsets,
} from '../../../../src/connect/runtime/connector-offset-reader.ts';
import {
  offsetKey,
  offsetValue,
  parseOffsetKey,
} from '../../../../src/connect/runtime/offset-keys.ts';
import { OffsetStorageWriter } from '../../../../src/connect/runtime/offset-storage-writer.ts';
import { MemoryOffsetBackingStore } from '../../../../src/connect/storage/memory-offset-backing-store.ts';

class FailingStore extends MemoryOffsetBackingStore {
  fail = true;
  override async set(entries: ReadonlyMap<string, string | null>): Promise<void> {
    if (this.fail) throw new Error('disk full');
    return super.set(entries);
  }
}

describe('offset keys', () => {
  it("use Kafka Connect's layout: [connector, partition] and the offset map as JSON", () => {
    expect(offsetKey('local-file-source', { filename: '/tmp/test.txt' })).toBe(
      '["local-file-source",{"filename":"/tmp/test.txt"}]',
    );
    expect(offsetValue({ position: 1234 })).toBe('{"position":1234}');
  });

  it('match one source partition whatever the key order of its map', () => {
    expect(offsetKey('c', { b: 1, a: 'x' })).toBe(offsetKey('c', { a: 'x', b: 1 }));
  });

  it('keep 64-bit positions exact', () => {
    expect(offsetValue({ lsn: 2n ** 60n + 1n })).toBe(`{"lsn":${2n ** 60n + 1n}}`);
  });

  it('parse back to the connector and partition', () => {
    expect(parseOffsetKey('["conn",{"server":"pg","slot":"s1"}]')).toEqual({
      connector: 'conn',
      partition: { server: 'pg', slot: 's1' },
    });
    expect(parseOffsetKey('{"not":"an offset key"}')).toBeUndefined();
  });
});

describe('OffsetStorageWriter and the reader', () => {
  it('makes flushed offsets readable, per connector', async () => {
    const store = new MemoryOffsetBackingStore();
    const writer = new OffsetStorageWriter('a', store);
    writer.offset({ file: 'x' }, { position: 5 });
    expect(writer.beginFlush()).toBe(true);
    await writer.doFlush();
    expect(await new ConnectorOffsetReader('a', store).offset({ file: 'x' })).toEqual({
      position: 5,
    });
    expect(await new ConnectorOffsetReader('b', store).offset({ file: 'x' })).toBeNull();
    expect(await connectorOffsets('a', store)).toEqual([
      { partition: { file: 'x' }, offset: { position: 5 } },
    ]);
  });

  it('has nothing to flush when no offset was recorded', () => {
    expect(new OffsetStorageWriter('a', new MemoryOffsetBackingStore()).beginFlush()).toBe(false);
  });

  it('puts a failed flush back under newer offsets, so no offset is lost or regresses', async () => {
    const store = new FailingStore();
    const writer = new OffsetStorageWriter('a', store);
    writer.offset({ file: 'x' }, { position: 5 });
    writer.offset({ file: 'y' }, { position: 1 });
    writer.beginFlush();
    writer.offset({ file: 'x' }, { position: 9 });
    await expect(writer.doFlush()).rejects.toThrow('disk full');
    writer.cancelFlush();
    store.fail = false;
    writer.beginFlush();
    await writer.doFlush();
    const reader = new ConnectorOffsetReader('a', store);
    expect(await reader.offset({ file: 'x' })).toEqual({ position: 9 });
    expect(await reader.offset({ file: 'y' })).toEqual({ position: 1 });
  });

  it('refuses a second flush while one is in progress', () => {
    const writer = new OffsetStorageWriter('a', new MemoryOffsetBackingStore());
    writer.offset({ file: 'x' }, { position: 1 });
    writer.beginFlush();
    expect(() => writer.beginFlush()).toThrow(/already in progress/);
  });

  it('deletes the stored offset of a partition reset with null', async () => {
    const store = new MemoryOffsetBackingStore();
    const writer = new OffsetStorageWriter('a', store);
    writer.offset({ file: 'x' }, { position: 1 });
    writer.beginFlush();
    await writer.doFlush();
    writer.offset({ file: 'x' }, null);
    writer.beginFlush();
    await writer.doFlush();
    expect((await store.entries()).size).toBe(0);
  });
});

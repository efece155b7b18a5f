import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CorruptOffsetFileError,
  FileOffsetBackingStore,
} from '../../../../src/connect/storage/file-offset-backing-store.ts';
import { useTmpDir } from '../../../helpers/tmp-dir.ts';

describe('FileOffsetBackingStore', () => {
  it('finds after a restart what was set before it', async () => {
    const path = join(useTmpDir(), 'nested', 'connect.offsets');
    const store = new FileOffsetBackingStore(path);
    await store.start();
    await store.set(new Map([['["c",{"f":"a"}]', '{"position":3}']]));
    await store.stop();
    const again = new FileOffsetBackingStore(path);
    await again.start();
    expect(await again.get(['["c",{"f":"a"}]', '["c",{"f":"b"}]'])).toEqual(
      new Map([['["c",{"f":"a"}]', '{"position":3}']]),
    );
  });

  it('writes a readable JSON document and leaves no temp files', async () => {
    const dir = useTmpDir();
    const path = join(dir, 'connect.offsets');
    const store = new FileOffsetBackingStore(path);
    await store.start();
    await store.set(new Map([['k', 'v']]));
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ version: 1, offsets: [['k', 'v']] });
    expect(readdirSync(dir)).toEqual(['connect.offsets']);
  });

  it('keeps every write when writes overlap, in call order', async () => {
    const path = join(useTmpDir(), 'connect.offsets');
    const store = new FileOffsetBackingStore(path);
    await store.start();
    await Promise.all([
      store.set(new Map([['k', '1']])),
      store.set(new Map([['j', 'x']])),
      store.set(new Map([['k', '2']])),
    ]);
    const again = new FileOffsetBackingStore(path);
    await again.start();
    expect(await again.entries()).toEqual(
      new Map([
        ['k', '2'],
        ['j', 'x'],
      ]),
    );
  });

  it('deletes keys set to null', async () => {
    const path = join(useTmpDir(), 'connect.offsets');
    const store = new FileOffsetBackingStore(path);
    await store.start();
    await store.set(new Map([['k', '1']]));
    await store.set(new Map([['k', null]]));
    const again = new FileOffsetBackingStore(path);
    await again.start();
    expect((await again.entries()).size).toBe(0);
  });

  it('refuses a corrupt file at start instead of replaying every source', async () => {
    const path = join(useTmpDir(), 'connect.offsets');
    writeFileSync(path, '{"version":1,"offsets":[["k"');
    const store = new FileOffsetBackingStore(path);
    await expect(store.start()).rejects.toBeInstanceOf(CorruptOffsetFileError);
    await expect(store.start()).rejects.toThrow(path);
  });

  it('starts empty when the file does not exist yet', async () => {
    const store = new FileOffsetBackingStore(join(useTmpDir(), 'none'));
    await store.start();
    expect((await store.entries()).size).toBe(0);
  });
});

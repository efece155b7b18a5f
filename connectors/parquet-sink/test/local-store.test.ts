import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalStore } from '../local-store.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'local-store-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('local store', () => {
  it('replaces an object whole and leaves no temporary file behind', async () => {
    const store = new LocalStore(pathToFileURL(dir).href);
    await store.put('t/p=0/a.parquet', new Uint8Array([1, 2, 3]));
    await store.put('t/p=0/a.parquet', new Uint8Array([4, 5]));
    expect(readdirSync(join(dir, 't/p=0'))).toEqual(['a.parquet']);
    expect(await store.get('t/p=0/a.parquet')).toEqual(new Uint8Array([4, 5]));
    expect(await store.readTail('t/p=0/a.parquet', 1)).toEqual(new Uint8Array([5]));
  });

  it('does not list the temporary files a crash before the rename leaves', async () => {
    const store = new LocalStore(pathToFileURL(dir).href);
    mkdirSync(join(dir, 't/p=0'), { recursive: true });
    writeFileSync(join(dir, 't/p=0/.t+0+5.parquet.123-0.tmp'), 'torn');
    await store.put('t/p=0/t+0+0.parquet', new Uint8Array([1]));
    expect(await store.list('t/')).toEqual(['t/p=0/t+0+0.parquet']);
    expect(await store.list('')).toEqual(['t/p=0/t+0+0.parquet']);
    expect(await store.list('u/')).toEqual([]);
  });

  it('refuses keys that would escape the folder', async () => {
    const store = new LocalStore(pathToFileURL(dir).href);
    await expect(store.put('../evil', new Uint8Array())).rejects.toThrow(
      /escapes the store folder/,
    );
  });
});

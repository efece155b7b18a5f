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

  it('discards the temporary files of one topic partition and nothing else', async () => {
    const store = new LocalStore(pathToFileURL(dir).href);
    for (const f of [
      't/a=1/.t+1+0000000005.parquet.123-0.tmp',
      't/a=2/.t+1+0000000009.parquet.123-4.tmp',
      't/a=2/.t+10+0000000009.parquet.123-5.tmp',
      't/a=2/.t+2+0000000009.parquet.123-6.tmp',
      'u/a=2/.u+1+0000000009.parquet.123-7.tmp',
    ]) {
      mkdirSync(join(dir, f, '..'), { recursive: true });
      writeFileSync(join(dir, f), 'torn');
    }
    await store.put('t/a=1/t+1+0000000000.parquet', new Uint8Array([1]));
    expect(await store.discardIncomplete('t/', 't+1+')).toBe(2);
    expect(readdirSync(join(dir, 't/a=1'))).toEqual(['t+1+0000000000.parquet']);
    expect(readdirSync(join(dir, 't/a=2')).sort()).toEqual([
      '.t+10+0000000009.parquet.123-5.tmp',
      '.t+2+0000000009.parquet.123-6.tmp',
    ]);
    expect(readdirSync(join(dir, 'u/a=2'))).toEqual(['.u+1+0000000009.parquet.123-7.tmp']);
  });

  it('refuses keys that would escape the folder', async () => {
    const store = new LocalStore(pathToFileURL(dir).href);
    await expect(store.put('../evil', new Uint8Array())).rejects.toThrow(
      /escapes the store folder/,
    );
  });
});

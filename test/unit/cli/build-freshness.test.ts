import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildIsFresh } from '../../../bin/build-freshness.js';

/** A repository-shaped folder whose files are all dated `t` seconds after the epoch. */
function repo(root: string, t: number): void {
  const files = [
    'package.json',
    'tsconfig.json',
    'tsconfig.build.json',
    'src/cli.ts',
    'src/util/thread.ts',
    'connectors/pg/index.ts',
    'connectors/pg/test/pg.test.ts',
  ];
  for (const f of files) {
    mkdirSync(join(root, f, '..'), { recursive: true });
    writeFileSync(join(root, f), '');
    utimesSync(join(root, f), t, t);
  }
}

function touch(path: string, t: number): void {
  writeFileSync(path, '');
  utimesSync(path, t, t);
}

describe('buildIsFresh', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'build-freshness-'));
    repo(root, 1_000);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('is false without a build', () => {
    expect(buildIsFresh(root)).toBe(false);
  });

  it('is true when the build is newer than every input', () => {
    mkdirSync(join(root, 'dist'));
    touch(join(root, 'dist/.build-stamp'), 2_000);
    expect(buildIsFresh(root)).toBe(true);
  });

  it('is false once a source, a connector source or a config file is newer than the build', () => {
    mkdirSync(join(root, 'dist'));
    touch(join(root, 'dist/.build-stamp'), 2_000);
    for (const f of ['src/util/thread.ts', 'connectors/pg/index.ts', 'tsconfig.build.json']) {
      touch(join(root, f), 3_000);
      expect(buildIsFresh(root), f).toBe(false);
      touch(join(root, f), 1_000);
      expect(buildIsFresh(root), f).toBe(true);
    }
    touch(join(root, 'src/new-module.ts'), 3_000);
    expect(buildIsFresh(root)).toBe(false);
  });

  it('ignores tests, which are not part of the build', () => {
    mkdirSync(join(root, 'dist'));
    touch(join(root, 'dist/.build-stamp'), 2_000);
    touch(join(root, 'connectors/pg/test/pg.test.ts'), 3_000);
    expect(buildIsFresh(root)).toBe(true);
  });
});

/**
 * Temporary directories that are removed when the test finishes, pass or fail.
 * `useTmpDir()` inside a test registers the removal with onTestFinished; for a
 * directory shared by a whole file, call `createTmpDir()` in beforeAll and
 * `remove()` in afterAll.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';

export interface TmpDir {
  path: string;
  remove(): void;
}

export function createTmpDir(prefix = 'connect-test-'): TmpDir {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** A temp dir for the current test, removed at its end. Returns its path. */
export function useTmpDir(prefix?: string): string {
  const dir = createTmpDir(prefix);
  onTestFinished(() => dir.remove());
  return dir.path;
}

/**
 * GET /'s build info: the project's version from package.json and the commit from
 * CONNECT_COMMIT or the repository's .git, read without a git process.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  buildInfo,
  gitCommit,
  KAFKA_CONNECT_REST_VERSION,
  serverInfo,
} from '../../../../src/connect/rest/server-info.ts';
import { repositoryRoot } from '../../../../src/util/code-layout.ts';
import { useTmpDir } from '../../../helpers/tmp-dir.ts';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);

function repo(files: Record<string, string>): string {
  const root = useTmpDir();
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('serverInfo', () => {
  it('answers the Kafka Connect REST version as version, ours apart', () => {
    expect(serverInfo({ version: '0.1.0', commit: A }, 'cid')).toEqual({
      version: KAFKA_CONNECT_REST_VERSION,
      commit: A,
      kafka_cluster_id: 'cid',
      connect_ts_version: '0.1.0',
      connect_ts_commit: A,
    });
    expect(KAFKA_CONNECT_REST_VERSION).toMatch(/^\d+\.\d+\.\d+$/);
  });
});

describe('gitCommit', () => {
  it('follows HEAD to a loose ref', () => {
    expect(
      gitCommit(repo({ '.git/HEAD': 'ref: refs/heads/main\n', '.git/refs/heads/main': `${A}\n` })),
    ).toBe(A);
  });

  it('finds a ref in packed-refs', () => {
    const root = repo({
      '.git/HEAD': 'ref: refs/heads/main\n',
      '.git/packed-refs': `# pack-refs with: peeled fully-peeled sorted\n${B} refs/heads/other\n${A} refs/heads/main\n`,
    });
    expect(gitCommit(root)).toBe(A);
  });

  it('reads a detached HEAD, and a worktree whose .git is a file', () => {
    expect(gitCommit(repo({ '.git/HEAD': `${B}\n` }))).toBe(B);
    const main = repo({
      '.git/worktrees/wt/HEAD': 'ref: refs/heads/feature\n',
      '.git/worktrees/wt/commondir': '../..\n',
      '.git/refs/heads/feature': `${A}\n`,
    });
    const worktree = repo({ '.git': `gitdir: ${join(main, '.git/worktrees/wt')}\n` });
    expect(gitCommit(worktree)).toBe(A);
  });

  it('is undefined without .git', () => {
    expect(gitCommit(repo({ 'package.json': '{}' }))).toBeUndefined();
  });
});

describe('buildInfo', () => {
  it("CONNECT_COMMIT wins over .git; the version is package.json's", () => {
    const root = repo({
      'package.json': '{"name":"connect-ts","version":"9.8.7"}',
      '.git/HEAD': `${A}\n`,
    });
    expect(buildInfo(root, {})).toEqual({ version: '9.8.7', commit: A });
    expect(buildInfo(root, { CONNECT_COMMIT: 'deadbeef' })).toEqual({
      version: '9.8.7',
      commit: 'deadbeef',
    });
    expect(buildInfo(repo({}), {})).toEqual({ version: 'unknown', commit: 'unknown' });
  });

  it.skipIf(!existsSync(join(repositoryRoot, '.git')))(
    "this repository's commit is a full sha",
    () => {
      expect(buildInfo(undefined, {}).commit).toMatch(/^[0-9a-f]{40}$/);
    },
  );
});

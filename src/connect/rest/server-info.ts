/**
 * What GET / answers. Kafka Connect's ServerInfo is {version, commit, kafka_cluster_id},
 * and tools read `version` as the Kafka Connect version they talk to (kcctl and UIs
 * enable features by it: a "0.1.0" reads as a pre-1.0 Connect without offsets, PATCH or
 * logger endpoints). So `version` is the Kafka Connect REST API version this server
 * implements, and this project's own version and build commit have fields of their
 * own (`connect_ts_version`, `connect_ts_commit`); `commit` carries the build commit
 * too, as Kafka's names the build of the server answering.
 *
 * The commit is CONNECT_COMMIT when set (an image built without .git), else read from
 * the repository's .git (HEAD, a loose ref or packed-refs; no git process), else
 * "unknown".
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { repositoryRoot } from '../../util/code-layout.ts';

/** The Kafka Connect release whose REST API (paths, bodies, codes) this server follows. */
export const KAFKA_CONNECT_REST_VERSION = '3.9.0';

export interface BuildInfo {
  /** This project's version (package.json). */
  version: string;
  /** Git commit of the code running, or "unknown". */
  commit: string;
}

export interface ServerInfo {
  version: string;
  commit: string;
  kafka_cluster_id: string;
  connect_ts_version: string;
  connect_ts_commit: string;
}

export function serverInfo(build: BuildInfo, kafkaClusterId: string): ServerInfo {
  return {
    version: KAFKA_CONNECT_REST_VERSION,
    commit: build.commit,
    kafka_cluster_id: kafkaClusterId,
    connect_ts_version: build.version,
    connect_ts_commit: build.commit,
  };
}

/** The running code's version and commit. */
export function buildInfo(
  root: string = repositoryRoot,
  env: Readonly<Record<string, string | undefined>> = process.env,
): BuildInfo {
  let version = 'unknown';
  try {
    version = String(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version);
  } catch {
    // A copy without package.json: the version is unknown, nothing else changes.
  }
  return { version, commit: env.CONNECT_COMMIT || gitCommit(root) || 'unknown' };
}

const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** HEAD's commit from the .git folder (or a worktree's .git file), undefined if none. */
export function gitCommit(root: string): string | undefined {
  let gitDir = join(root, '.git');
  const pointer = read(gitDir);
  if (pointer?.startsWith('gitdir:')) gitDir = resolve(root, pointer.slice(7).trim());
  const head = read(join(gitDir, 'HEAD'));
  if (head === undefined) return undefined;
  if (SHA.test(head)) return head;
  if (!head.startsWith('ref:')) return undefined;
  const ref = head.slice(4).trim();
  // A worktree keeps its refs in the main repository's folder.
  const common = read(join(gitDir, 'commondir'));
  const refDirs = common === undefined ? [gitDir] : [gitDir, resolve(gitDir, common)];
  for (const dir of refDirs) {
    const loose = read(join(dir, ref));
    if (loose !== undefined && SHA.test(loose)) return loose;
    const packed = read(join(dir, 'packed-refs'));
    const line = packed?.split('\n').find((l) => l.endsWith(` ${ref}`));
    const sha = line?.split(' ')[0];
    if (sha !== undefined && SHA.test(sha)) return sha;
  }
  return undefined;
}

/**
 * Small metadata files replaced atomically: write `<name>.tmp`, fsync it, rename it
 * over `<name>`, fsync the directory. A crash leaves either the old or the new
 * content, never a mix; a leftover `.tmp` is ignored (and overwritten next time).
 */
import {
  closeSync,
  existsSync,
  fsyncSync,
  openSync,
  readFileSync,
  renameSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';

export function writeFileAtomic(path: string, content: string | Buffer): void {
  const tmp = `${path}.tmp`;
  const fd = openSync(tmp, 'w');
  try {
    if (typeof content === 'string') writeSync(fd, content);
    else writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  fsyncDir(dirname(path));
}

/** Makes created, renamed and deleted names in `dir` durable. */
export function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** The parsed JSON of `path`, or undefined when it is missing or not valid JSON. */
export function readJsonFile(path: string): unknown {
  if (!existsSync(path)) return undefined;
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
}

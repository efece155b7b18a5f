/**
 * Start a worker thread on a module that may be TypeScript. In a compiled process an
 * entry whose compiled twin exists starts directly on it. Otherwise a .ts entry is
 * loaded through a tiny bootstrap that registers tsx first (see thread-bootstrap.mjs):
 * Node 20 does not carry the main thread's loader hooks into workers.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { repositoryRoot, runningCompiled } from './code-layout.ts';

export function startThread(
  entry: URL,
  workerData: unknown,
  options: Omit<WorkerOptions, 'workerData'> = {},
): Worker {
  if (runningCompiled && entry.pathname.endsWith('.ts')) {
    const compiled = new URL(entry.href.replace(/\.ts$/, '.js'));
    if (existsSync(fileURLToPath(compiled))) {
      return new Worker(compiled, {
        ...options,
        workerData: { entry: compiled.href, data: workerData },
      });
    }
  }
  // The bootstrap is not compiled: it lives in src/ in both cases.
  const bootstrap = pathToFileURL(join(repositoryRoot, 'src/util/thread-bootstrap.mjs'));
  return new Worker(bootstrap, { ...options, workerData: { entry: entry.href, data: workerData } });
}

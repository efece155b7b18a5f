/**
 * Start a worker thread on a module that may be TypeScript. Node 20 does not carry
 * the main thread's loader hooks into workers, so a .ts entry is loaded through a
 * tiny bootstrap that registers tsx first (see thread-bootstrap.mjs).
 */
import { Worker, type WorkerOptions } from 'node:worker_threads';

export function startThread(
  entry: URL,
  workerData: unknown,
  options: Omit<WorkerOptions, 'workerData'> = {},
): Worker {
  const bootstrap = new URL('./thread-bootstrap.mjs', import.meta.url);
  return new Worker(bootstrap, { ...options, workerData: { entry: entry.href, data: workerData } });
}

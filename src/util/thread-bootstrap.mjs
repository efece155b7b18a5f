// Loads a worker thread's real entry module, registering tsx first when it is
// TypeScript. The entry reads its own data from workerData.data.
import { workerData } from 'node:worker_threads';

if (workerData.entry.endsWith('.ts')) {
  const { register } = await import('tsx/esm/api');
  register();
}
await import(workerData.entry);

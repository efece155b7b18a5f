// V8 settings of a worker process: bin/connect.js applies them before it loads the
// runtime, and a benchmark that runs a worker inside its own process applies them too,
// so that it measures what `connect` runs.
import v8 from 'node:v8';

/**
 * V8 lets the old generation grow to up to four times the live heap when collecting
 * is cheap, and a worker's heap is mostly short-lived records: the main heap of a CDC
 * worker sat at 130-150 MB over 30-40 MB live. Growth of at most twice the live heap
 * cut its peak RSS by about 60 MB at no measurable CPU cost (bench/cdc/end-to-end.ts).
 * A --heap-growing-percent given to node itself wins.
 */
export function applyWorkerV8Flags() {
  if (!process.execArgv.some((a) => a.startsWith('--heap-growing-percent'))) {
    v8.setFlagsFromString('--heap-growing-percent=100');
  }
}

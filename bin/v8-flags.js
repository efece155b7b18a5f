// V8 settings of a worker process: bin/connect.js applies them before it loads the
// runtime, and a benchmark that runs a worker inside its own process applies them too,
// so that it measures what `connect` runs.
import v8 from 'node:v8';

/**
 * Growth: V8 lets the old generation grow to up to four times the live heap when
 * collecting is cheap, and a worker's heap is mostly short-lived records: the main
 * heap of a CDC worker sat at 130-150 MB over 30-40 MB live. Growth of at most twice
 * the live heap cut its peak RSS by about 60 MB at no measurable CPU cost
 * (bench/cdc/end-to-end.ts).
 *
 * Pretenuring: V8 allocates straight in the old generation what an allocation site
 * made that survived its first young collections. A worker's records live for one
 * batch, a few milliseconds, but a stall (a slow store, a rebalance) keeps a batch
 * alive across collections, and V8 then pretenures the converter's and the consumer's
 * allocation sites for good: every record goes to the old generation, which is then
 * marked and compacted every 80 ms (27 full collections per million rows instead of
 * 2). In the Parquet sink bench that happened to one process in three or four and
 * cost it a third of its rate. Without pretenuring, young collections handle them.
 *
 * A flag given to node itself wins.
 */
export function applyWorkerV8Flags() {
  const given = (flag) => process.execArgv.some((a) => a.includes(flag));
  if (!given('heap-growing-percent')) v8.setFlagsFromString('--heap-growing-percent=100');
  if (!given('allocation-site-pretenuring')) {
    v8.setFlagsFromString('--no-allocation-site-pretenuring');
  }
}

/**
 * The embedded broker on a worker thread of its own (DESIGN.md: broker I/O and
 * connector work use both cores and meet only over loopback TCP).
 *
 * Messages, parent -> thread: `{ type: 'stop' }`, `{ type: 'metrics', id }`. Thread ->
 * parent: `{ type: 'started', host, port }` once listening, `{ type: 'failed', message }`
 * if startBroker rejected, `{ type: 'metrics', id, text }` answering a metrics request
 * (the broker's Prometheus text, made on the broker thread from its own state, so the
 * worker's /metrics shows the embedded broker without sharing memory with it; nothing
 * crosses the threads unless someone scrapes), `{ type: 'stopped' }` once stop() has
 * finished; then the
 * thread's event loop empties and it exits. `startBrokerThread` resolves with the
 * same RunningBroker contract as startBroker. If the thread dies unexpectedly its
 * error is logged and stop() resolves at once (nothing is left to stop).
 */
import type { Worker } from 'node:worker_threads';
import { getLogger } from '../util/logger.ts';
import { startThread } from '../util/thread.ts';
import type { BrokerOptions, RunningBroker } from './broker.ts';

export type BrokerThreadMessage =
  | { type: 'started'; host: string; port: number }
  | { type: 'failed'; message: string }
  | { type: 'metrics'; id: number; text: string }
  | { type: 'stopped' };

/** A metrics request not answered within this long answers empty (the thread is stuck or gone). */
const METRICS_TIMEOUT_MS = 5_000;

/** Semi-spaces of 8 MB (the young generation is three of them); V8's default is 16. */
const BROKER_YOUNG_GENERATION_MB = 24;

export async function startBrokerThread(options: BrokerOptions): Promise<RunningBroker> {
  const logger = getLogger('broker.thread');
  // Next to a worker: the worker's registry has the process gauges.
  const threadOptions: BrokerOptions = { ...options, processMetrics: false };
  const worker: Worker = startThread(
    new URL('./broker-thread-main.ts', import.meta.url),
    threadOptions,
    {
      name: 'broker',
      // The broker allocates few, short-lived objects (its buffers are pooled): half of
      // V8's default young generation costs it no measurable CPU and 16 MB of RSS less.
      resourceLimits: { maxYoungGenerationSizeMb: BROKER_YOUNG_GENERATION_MB },
    },
  );
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  worker.on('error', (err) => logger.error({ err }, 'broker thread failed'));
  const started = await new Promise<BrokerThreadMessage>((resolve) => {
    const onMessage = (m: BrokerThreadMessage) => {
      if (m.type === 'started' || m.type === 'failed') {
        worker.off('message', onMessage);
        resolve(m);
      }
    };
    worker.on('message', onMessage);
    worker.once('exit', (code) =>
      resolve({ type: 'failed', message: `broker thread exited with code ${code}` }),
    );
    worker.once('error', (err) => resolve({ type: 'failed', message: err.message }));
  });
  if (started.type !== 'started') {
    await worker.terminate();
    throw new Error(started.type === 'failed' ? started.message : 'broker thread did not start');
  }
  let stopped: Promise<void> | undefined;
  let nextMetricsId = 0;
  const metricsWaiters = new Map<number, (text: string) => void>();
  worker.on('message', (m: BrokerThreadMessage) => {
    if (m.type !== 'metrics') return;
    metricsWaiters.get(m.id)?.(m.text);
  });
  void exited.then(() => {
    for (const answer of [...metricsWaiters.values()]) answer('');
  });
  return {
    host: started.host,
    port: started.port,
    metrics: () => {
      if (stopped !== undefined) return Promise.resolve('');
      const id = nextMetricsId++;
      return new Promise<string>((resolve) => {
        const timer = setTimeout(() => answer(''), METRICS_TIMEOUT_MS);
        timer.unref();
        const answer = (text: string) => {
          clearTimeout(timer);
          metricsWaiters.delete(id);
          resolve(text);
        };
        metricsWaiters.set(id, answer);
        worker.postMessage({ type: 'metrics', id });
      });
    },
    stop: () => {
      stopped ??= (async () => {
        worker.postMessage({ type: 'stop' });
        await exited;
      })();
      return stopped;
    },
  };
}

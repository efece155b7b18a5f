/**
 * Entry module of the broker's worker thread (see broker-thread.ts for the messages).
 * Runs startBroker with the options from workerData and stops it on `stop`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type BrokerOptions, startBroker } from './broker.ts';
import type { BrokerThreadMessage } from './broker-thread.ts';

const port = parentPort!;
const options = (workerData as { data: BrokerOptions }).data;
const send = (m: BrokerThreadMessage) => port.postMessage(m);

try {
  const broker = await startBroker(options);
  port.on('message', async (m: { type: string; id?: number }) => {
    if (m.type === 'metrics') {
      const text = await broker.metrics?.().catch(() => '');
      send({ type: 'metrics', id: m.id ?? -1, text: text ?? '' });
      return;
    }
    if (m.type !== 'stop') return;
    await broker.stop();
    send({ type: 'stopped' });
    port.close();
  });
  send({ type: 'started', host: broker.host, port: broker.port });
} catch (e) {
  send({ type: 'failed', message: (e as Error).message });
  port.close();
}

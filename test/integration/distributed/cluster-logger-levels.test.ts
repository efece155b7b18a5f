/**
 * PUT /admin/loggers/{name}?scope=cluster (KIP-976) across `connect worker` processes:
 * asked on one worker, applied on every worker through the config topic, and applied
 * by a worker that joins afterwards. Before, the level changed on the asked worker
 * only, although the answer (204) said cluster.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import {
  baseOverrides,
  embeddedBrokerOverrides,
  rest,
  startWorker,
  type WorkerProcess,
  waitFor,
} from './distributed-helpers.ts';

const LOGGER = 'connect.worker';

async function levelOn(worker: WorkerProcess): Promise<string> {
  return (await rest(worker, 'GET', `/admin/loggers/${LOGGER}`)).body.level;
}

describe('cluster-scoped logger levels', () => {
  it('reach every worker, and a worker that joins later', async () => {
    const dir = useTmpDir();
    const w1 = await startWorker([...embeddedBrokerOverrides(dir), ...baseOverrides()]);
    onTestFinished(() => w1.process.stop().then(() => {}));
    const joined = [...baseOverrides(), '-o', `bootstrap.servers=${w1.bootstrap}`];
    const w2 = await startWorker(joined);
    onTestFinished(() => w2.process.stop().then(() => {}));
    expect(await levelOn(w2)).toBe('INFO');

    const put = await rest(w1, 'PUT', `/admin/loggers/${LOGGER}?scope=cluster`, { level: 'DEBUG' });

    expect(put.status).toBe(204);
    expect(await levelOn(w1)).toBe('DEBUG');
    await waitFor('the level on the other worker', async () =>
      (await levelOn(w2)) === 'DEBUG' ? true : undefined,
    );
    const w3 = await startWorker(joined);
    onTestFinished(() => w3.process.stop().then(() => {}));
    expect(await levelOn(w3)).toBe('DEBUG');
  }, 120_000);
});

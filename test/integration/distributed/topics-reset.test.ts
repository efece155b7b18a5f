/**
 * PUT /connectors/{name}/topics/reset on a running connector (KIP-558): the active
 * topics are emptied, and recorded again as soon as records of them flow, as Kafka
 * records the active topic per record. Before, a running task never reported a topic
 * twice, so after a reset GET /topics stayed empty until the task restarted.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import {
  baseOverrides,
  embeddedBrokerOverrides,
  rest,
  startWorker,
  waitFor,
} from './distributed-helpers.ts';

describe('topics/reset on a running connector', () => {
  it('empties the active topics, which are recorded again as records flow', async () => {
    const w = await startWorker([...embeddedBrokerOverrides(useTmpDir()), ...baseOverrides()]);
    onTestFinished(() => w.process.stop().then(() => {}));
    const created = await rest(w, 'POST', '/connectors', {
      name: 'gen',
      config: {
        'connector.class': 'connect.datagen.DatagenConnector',
        topic: 'generated',
        'records.per.second': '50',
      },
    });
    expect(created.status).toBe(201);
    const topics = async () => (await rest(w, 'GET', '/connectors/gen/topics')).body.gen.topics;
    await waitFor('the topic recorded', async () =>
      (await topics()).includes('generated') ? true : undefined,
    );

    // Paused, so no record re-records the topic before the empty answer is seen; the
    // task stays the same instance through pause and resume.
    expect((await rest(w, 'PUT', '/connectors/gen/pause')).status).toBe(202);
    await waitFor('the task paused', async () =>
      (await rest(w, 'GET', '/connectors/gen/status')).body.tasks?.[0]?.state === 'PAUSED'
        ? true
        : undefined,
    );
    const reset = await rest(w, 'PUT', '/connectors/gen/topics/reset');
    expect(reset.status).toBe(202);
    await waitFor('the active topics emptied', async () =>
      (await topics()).length === 0 ? true : undefined,
    );

    expect((await rest(w, 'PUT', '/connectors/gen/resume')).status).toBe(202);
    await waitFor('the topic recorded again while records flow', async () =>
      (await topics()).includes('generated') ? true : undefined,
    );
  }, 90_000);
});

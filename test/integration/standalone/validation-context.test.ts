/**
 * A connector's cross-field `validate` is told the cluster's other connectors, so a
 * connector can refuse an exclusive resource (a replication slot) another one holds:
 * checked over the REST API of a standalone worker with a test plugin that refuses a
 * `slot.name` in use (fixtures/context-plugins).
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../../helpers/broker.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import { rest, useStandalone, workerConfig } from './standalone-helpers.ts';

const contextPlugins = fileURLToPath(new URL('./fixtures/context-plugins', import.meta.url));

let broker: TestBroker;

beforeAll(async () => {
  broker = await startTestBroker();
});

afterAll(async () => {
  await broker?.stop();
});

const slotConfig = (slot: string, extra: Record<string, string> = {}): Record<string, string> => ({
  'connector.class': 'test.SlotSource',
  'slot.name': slot,
  ...extra,
});

async function useWorker() {
  return useStandalone(
    workerConfig(broker.bootstrap, useTmpDir(), { 'plugin.path': contextPlugins }),
  );
}

describe("a connector's validate sees the other connectors of the cluster", () => {
  it('refuses a second connector that takes a slot another holds, with a 400 naming the key and the holder', async () => {
    const worker = await useWorker();
    const first = await rest(worker, 'POST', '/connectors', {
      name: 'first',
      config: slotConfig('orders'),
    });
    expect(first.status).toBe(201);

    const second = await rest(worker, 'POST', '/connectors', {
      name: 'second',
      config: slotConfig('orders'),
    });

    expect(second).toEqual({
      status: 400,
      body: {
        error_code: 400,
        message: [
          'Connector configuration is invalid and contains the following 1 error(s):',
          'Replication slot orders is already used by connector first',
          'You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`',
        ].join('\n'),
      },
    });
    expect((await rest(worker, 'GET', '/connectors')).body).toEqual(['first']);
  });

  it('shows the conflict on the key in /config/validate, with or without a name', async () => {
    const worker = await useWorker();
    await rest(worker, 'PUT', '/connectors/first/config', slotConfig('orders'));

    // Without a name the connector under test is none of the stored ones (and `name`
    // itself is reported missing, as Kafka Connect does).
    for (const body of [slotConfig('orders', { name: 'second' }), slotConfig('orders')]) {
      const answer = await rest(
        worker,
        'PUT',
        '/connector-plugins/SlotSource/config/validate',
        body,
      );
      expect(answer.status).toBe(200);
      expect(answer.body.error_count).toBe(body.name === undefined ? 2 : 1);
      expect(
        answer.body.configs.find(
          (c: { value: { name: string } | null }) => c.value?.name === 'slot.name',
        ).value,
      ).toEqual({
        name: 'slot.name',
        value: 'orders',
        recommended_values: [],
        errors: ['Replication slot orders is already used by connector first'],
        visible: true,
      });
    }
    const other = await rest(
      worker,
      'PUT',
      '/connector-plugins/SlotSource/config/validate',
      slotConfig('payments', { name: 'second' }),
    );
    expect(other.body.error_count).toBe(0);
  });

  it('accepts a connector updated with its own unchanged config: it is not among the others', async () => {
    const worker = await useWorker();
    await rest(worker, 'PUT', '/connectors/first/config', slotConfig('orders'));

    const again = await rest(worker, 'PUT', '/connectors/first/config', slotConfig('orders'));
    const validated = await rest(
      worker,
      'PUT',
      '/connector-plugins/SlotSource/config/validate',
      slotConfig('orders', { name: 'first' }),
    );

    expect(again.status).toBe(200);
    expect(again.body.config['slot.name']).toBe('orders');
    expect(validated.body.error_count).toBe(0);
  });

  it('lets a slot be taken again once the connector holding it is deleted', async () => {
    const worker = await useWorker();
    await rest(worker, 'PUT', '/connectors/first/config', slotConfig('orders'));
    expect((await rest(worker, 'DELETE', '/connectors/first')).status).toBe(204);

    const second = await rest(worker, 'POST', '/connectors', {
      name: 'second',
      config: slotConfig('orders'),
    });

    expect(second.status).toBe(201);
  });
});

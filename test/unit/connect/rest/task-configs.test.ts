/**
 * Task configs carry `task.class`, as Kafka Connect's Worker adds it to every config
 * a connector generates (GET /connectors/{name}/tasks shows them).
 */
import { Kafka, logLevel } from 'kafkajs';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { loadPlugins } from '../../../../src/connect/runtime/plugins.ts';
import { taskClassName, Worker } from '../../../../src/connect/runtime/worker.ts';
import { MemoryOffsetBackingStore } from '../../../../src/connect/storage/memory-offset-backing-store.ts';
import { getLogger } from '../../../../src/util/logger.ts';
import { fileConnectorFolder, sourceConfig } from './rest-fixture.ts';

describe('task.class', () => {
  it('names the task after the connector class, as Kafka names its tasks', () => {
    expect(taskClassName('connect.file.FileStreamSourceConnector')).toBe(
      'connect.file.FileStreamSourceTask',
    );
    expect(taskClassName('com.example.Odd')).toBe('com.example.OddTask');
  });

  it('is in every task config the worker generates', async () => {
    const plugins = await loadPlugins({
      pluginPath: [fileConnectorFolder],
      logger: getLogger('test.plugins'),
    });
    const worker = new Worker({
      workerId: 'test:1',
      config: {},
      plugins,
      offsetStore: new MemoryOffsetBackingStore(),
      status: { connectorState() {}, taskState() {} },
      // Never used: a connector's start and task configs make no Kafka call.
      kafka: new Kafka({ brokers: ['127.0.0.1:1'], logLevel: logLevel.NOTHING }),
      logger: pino({ level: 'silent' }),
    });
    const config = sourceConfig('src');
    expect(await worker.startConnector('src', config, 'RUNNING', () => {})).toBe(true);
    const tasks = await worker.connectorTaskConfigs('src', config);
    await worker.stopConnector('src');
    expect(tasks.length).toBeGreaterThan(0);
    for (const task of tasks) {
      expect(task['task.class']).toBe('connect.file.FileStreamSourceTask');
    }
  });
});

/**
 * Step 5 of the connector lifecycle (src/connect/api/connector.ts): the runtime calls
 * `deleted(config)` exactly when the connector is deleted, after its stop() and its
 * tasks' stop, and never on a stop, pause, resume, restart or shutdown. The plugin
 * (fixtures/stuck-plugins) writes each call it gets to a file.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StandaloneWorker } from '../../../src/connect/runtime/standalone-worker.ts';
import { startTestBroker, type TestBroker } from '../../helpers/broker.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import { rest, useStandalone, waitFor, workerConfig } from './standalone-helpers.ts';

const plugins = fileURLToPath(new URL('./fixtures/stuck-plugins', import.meta.url));

let broker: TestBroker;

beforeAll(async () => {
  broker = await startTestBroker();
});

afterAll(async () => {
  await broker?.stop();
});

function events(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

const deletedCalls = (file: string) =>
  events(file)
    .filter((e) => e.startsWith('connector.deleted '))
    .map((e) => {
      const [, instance, ...json] = e.split(' ');
      return { instance: Number(instance), config: JSON.parse(json.join(' ')) };
    });

async function state(worker: StandaloneWorker, name: string): Promise<string> {
  return (await rest(worker, 'GET', `/connectors/${name}/status`)).body.connector.state;
}

async function until(worker: StandaloneWorker, name: string, wanted: string): Promise<void> {
  await waitFor(`${name} to be ${wanted}`, async () =>
    (await state(worker, name)) === wanted ? true : undefined,
  );
}

describe("the connector's deleted hook", () => {
  it('DELETE calls deleted(config) once, after the stops; stop, pause, resume and restarts never do', async () => {
    const dir = useTmpDir();
    const file = join(dir, 'events');
    const worker = await useStandalone(
      workerConfig(broker.bootstrap, dir, { 'plugin.path': plugins }),
    );
    const config = {
      'connector.class': 'test.StuckSource',
      'tasks.max': '2',
      'events.file': file,
    };
    expect((await rest(worker, 'POST', '/connectors', { name: 'rec', config })).status).toBe(201);
    await until(worker, 'rec', 'RUNNING');
    await rest(worker, 'PUT', '/connectors/rec/pause');
    await until(worker, 'rec', 'PAUSED');
    await rest(worker, 'PUT', '/connectors/rec/resume');
    await until(worker, 'rec', 'RUNNING');
    await rest(worker, 'POST', '/connectors/rec/restart');
    await rest(worker, 'POST', '/connectors/rec/restart?includeTasks=true');
    await until(worker, 'rec', 'RUNNING');
    await rest(worker, 'PUT', '/connectors/rec/stop');
    await until(worker, 'rec', 'STOPPED');
    await rest(worker, 'PUT', '/connectors/rec/resume');
    await until(worker, 'rec', 'RUNNING');
    await waitFor('two tasks to run', async () => {
      const s = (await rest(worker, 'GET', '/connectors/rec/status')).body;
      return s.tasks.length === 2 && s.tasks.every((t: { state: string }) => t.state === 'RUNNING')
        ? true
        : undefined;
    });
    expect(deletedCalls(file)).toEqual([]);

    expect((await rest(worker, 'DELETE', '/connectors/rec')).status).toBe(204);
    const calls = deletedCalls(file);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.config).toEqual({ ...config, name: 'rec' });
    // After the stop of the running instance (the one it is called on) and of every task.
    const all = events(file);
    const at = all.findIndex((e) => e.startsWith('connector.deleted '));
    expect(all.slice(0, at)).toContain(`connector.stop ${calls[0]?.instance}`);
    const started = all.filter((e) => e.startsWith('task.start ')).length;
    expect(all.slice(0, at).filter((e) => e.startsWith('task.stop ')).length).toBe(started);
    expect(all.slice(at + 1)).toEqual([]);
  });

  it('a FAILED or STOPPED connector gets deleted(config) when deleted; a worker shutdown calls it for none', async () => {
    const dir = useTmpDir();
    const file = join(dir, 'events');
    const worker = await useStandalone(
      workerConfig(broker.bootstrap, dir, { 'plugin.path': plugins }),
    );
    const config = (extra: Record<string, string> = {}) => ({
      'connector.class': 'test.StuckSink',
      topics: 'deleted-hook',
      'events.file': file,
      ...extra,
    });
    await rest(worker, 'POST', '/connectors', {
      name: 'broken',
      config: config({ fail: 'connector.start' }),
    });
    await until(worker, 'broken', 'FAILED');
    await rest(worker, 'POST', '/connectors', { name: 'halted', config: config() });
    await until(worker, 'halted', 'RUNNING');
    await rest(worker, 'PUT', '/connectors/halted/stop');
    await until(worker, 'halted', 'STOPPED');
    await rest(worker, 'POST', '/connectors', { name: 'kept', config: config() });
    await until(worker, 'kept', 'RUNNING');

    expect((await rest(worker, 'DELETE', '/connectors/broken')).status).toBe(204);
    expect((await rest(worker, 'DELETE', '/connectors/halted')).status).toBe(204);
    await worker.stop();
    expect(deletedCalls(file).map((c) => c.config.name)).toEqual(['broken', 'halted']);
    expect(deletedCalls(file).map((c) => c.config)).toEqual([
      { ...config({ fail: 'connector.start' }), name: 'broken' },
      { ...config(), name: 'halted' },
    ]);
  });
});

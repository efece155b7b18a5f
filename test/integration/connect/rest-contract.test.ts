/**
 * The REST contract fixes of issue #25 on a real standalone worker (in process, test
 * broker): what the unit tests check on the REST app alone, checked here through the
 * worker's own config and herder, where a key could be defined and still not wired.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../../helpers/broker.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import { rest, useStandalone, waitFor, workerConfig } from '../standalone/standalone-helpers.ts';

let broker: TestBroker;
beforeAll(async () => {
  broker = await startTestBroker();
});
afterAll(async () => {
  await broker?.stop();
});

describe('a standalone worker', () => {
  it('answers CORS from access.control.allow.origin/.methods, absolute Location, task.class, typo refusal and GET /', async () => {
    const dir = useTmpDir();
    const worker = await useStandalone(
      workerConfig(broker.bootstrap, dir, {
        'access.control.allow.origin': 'https://ui.example',
        'access.control.allow.methods': 'GET,POST,PUT,DELETE',
      }),
    );

    const preflight = await fetch(`${worker.restUrl}/connectors/x/config`, {
      method: 'OPTIONS',
      headers: { origin: 'https://ui.example', 'access-control-request-method': 'PUT' },
    });
    expect(preflight.status).toBe(200);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://ui.example');
    expect(preflight.headers.get('access-control-allow-methods')).toBe('GET,POST,PUT,DELETE');

    const config = {
      'connector.class': 'FileStreamSource',
      file: join(dir, 'in.txt'),
      topic: 'contract-lines',
    };
    const typo = await rest(worker, 'POST', '/connectors', {
      name: 'src',
      config: { ...config, 'batch.sise': '10' },
    });
    expect(typo.status).toBe(400);
    expect(typo.body.message).toContain("unknown key 'batch.sise': did you mean 'batch.size'?");

    const created = await fetch(`${worker.restUrl}/connectors`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'src', config }),
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`${worker.restUrl}/connectors/src`);

    const tasks = await waitFor('the task configs', async () => {
      const t = await rest(worker, 'GET', '/connectors/src/tasks');
      return t.body.length > 0 ? t.body : undefined;
    });
    expect(tasks[0].config['task.class']).toBe('connect.file.FileStreamSourceTask');

    // AbstractHerder.taskStatus's message, as the in-memory double the unit tests use says it.
    const missingTask = await rest(worker, 'GET', '/connectors/src/tasks/7/status');
    expect(missingTask.status).toBe(404);
    expect(missingTask.body).toEqual({
      error_code: 404,
      message: 'No status found for task src-7',
    });

    const root = await rest(worker, 'GET', '/');
    expect(root.body).toMatchObject({
      version: '3.9.0',
      connect_ts_version: expect.any(String),
      connect_ts_commit: expect.any(String),
      kafka_cluster_id: expect.any(String),
    });
  });
});

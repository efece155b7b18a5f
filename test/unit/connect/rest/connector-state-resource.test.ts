import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RestFixture, restFixture, sourceConfig } from './rest-fixture.ts';

let f: RestFixture;
beforeEach(async () => {
  f = await restFixture();
  await f.app.inject({
    method: 'POST',
    url: '/connectors',
    payload: { name: 'src', config: sourceConfig('src', { 'tasks.max': '2' }) },
  });
});
afterEach(async () => {
  await f.close();
});

const W = '127.0.0.1:8083';

describe('GET /connectors/{name}/status', () => {
  it('answers connector and task states with worker ids and type', async () => {
    f.herder.setState('src', 1, 'FAILED', 'java.lang.Exception: boom');
    const res = await f.app.inject({ method: 'GET', url: '/connectors/src/status' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      name: 'src',
      connector: { state: 'RUNNING', worker_id: W },
      tasks: [
        { id: 0, state: 'RUNNING', worker_id: W },
        { id: 1, state: 'FAILED', worker_id: W, trace: 'java.lang.Exception: boom' },
      ],
      type: 'source',
    });
  });

  it('is 404 "No status found for connector X" for an unknown connector', async () => {
    const res = await f.app.inject({ method: 'GET', url: '/connectors/nope/status' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error_code: 404, message: 'No status found for connector nope' });
  });
});

describe('POST /connectors/{name}/restart', () => {
  it('restarts the connector only with 204 and no body by default', async () => {
    const res = await f.app.inject({ method: 'POST', url: '/connectors/src/restart' });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
  });

  it('answers 202 with the planned states when includeTasks=true', async () => {
    const res = await f.app.inject({
      method: 'POST',
      url: '/connectors/src/restart?includeTasks=true',
    });
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({
      name: 'src',
      connector: { state: 'RESTARTING', worker_id: W },
      tasks: [
        { id: 0, state: 'RESTARTING', worker_id: W },
        { id: 1, state: 'RESTARTING', worker_id: W },
      ],
      type: 'source',
    });
  });

  it('with includeTasks=true&onlyFailed=true restarts only failed instances', async () => {
    f.herder.setState('src', 1, 'FAILED', 'trace');
    const res = await f.app.inject({
      method: 'POST',
      url: '/connectors/src/restart?includeTasks=true&onlyFailed=true',
    });
    expect(res.statusCode).toBe(202);
    const body = res.json();
    expect(body.connector.state).toBe('RUNNING');
    expect(body.tasks.map((t: { state: string }) => t.state)).toEqual(['RUNNING', 'RESTARTING']);
  });

  it("is 404 for an unknown connector, either way, with the standalone herder's texts", async () => {
    const answers = [];
    for (const url of ['/connectors/nope/restart', '/connectors/nope/restart?includeTasks=true']) {
      const res = await f.app.inject({ method: 'POST', url });
      answers.push({ status: res.statusCode, body: res.json() });
    }
    expect(answers).toEqual([
      { status: 404, body: { error_code: 404, message: 'Connector nope not found' } },
      { status: 404, body: { error_code: 404, message: 'Unknown connector: nope' } },
    ]);
  });
});

describe('PUT /connectors/{name}/pause|resume|stop', () => {
  it('pause and resume answer 202 without a body and change the state', async () => {
    const paused = await f.app.inject({ method: 'PUT', url: '/connectors/src/pause' });
    expect(paused.statusCode).toBe(202);
    expect(paused.body).toBe('');
    const status = await f.app.inject({ method: 'GET', url: '/connectors/src/status' });
    expect(status.json().connector.state).toBe('PAUSED');
    const resumed = await f.app.inject({ method: 'PUT', url: '/connectors/src/resume' });
    expect(resumed.statusCode).toBe(202);
    const after = await f.app.inject({ method: 'GET', url: '/connectors/src/status' });
    expect(after.json().connector.state).toBe('RUNNING');
  });

  it('accepts an empty JSON body, as curl -H "Content-Type: application/json" -X PUT sends', async () => {
    const res = await f.app.inject({
      method: 'PUT',
      url: '/connectors/src/pause',
      headers: { 'content-type': 'application/json' },
      payload: '',
    });
    expect(res.statusCode).toBe(202);
  });

  it('stop answers 204 and leaves the connector without tasks', async () => {
    const res = await f.app.inject({ method: 'PUT', url: '/connectors/src/stop' });
    expect(res.statusCode).toBe(204);
    const tasks = await f.app.inject({ method: 'GET', url: '/connectors/src/tasks' });
    expect(tasks.json()).toEqual([]);
  });

  it('are 404 "Unknown connector X" for an unknown connector', async () => {
    for (const action of ['pause', 'resume', 'stop']) {
      const res = await f.app.inject({ method: 'PUT', url: `/connectors/nope/${action}` });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error_code: 404, message: 'Unknown connector nope' });
    }
  });
});

describe('tasks', () => {
  it('GET /tasks lists ids and configs', async () => {
    const res = await f.app.inject({ method: 'GET', url: '/connectors/src/tasks' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toHaveLength(2);
    expect(body[1].id).toEqual({ connector: 'src', task: 1 });
    expect(body[1].config.file).toBe('/tmp/in.txt');
  });

  it('GET /tasks-config (deprecated) maps "<connector>-<task>" to each config', async () => {
    const res = await f.app.inject({ method: 'GET', url: '/connectors/src/tasks-config' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body)).toEqual(['src-0', 'src-1']);
    expect(body['src-1'].file).toBe('/tmp/in.txt');
  });

  it('GET /tasks/{id}/status answers the task state; unknown task is 404', async () => {
    const res = await f.app.inject({ method: 'GET', url: '/connectors/src/tasks/0/status' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ id: 0, state: 'RUNNING', worker_id: W });
    const missing = await f.app.inject({ method: 'GET', url: '/connectors/src/tasks/7/status' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ error_code: 404, message: 'No status found for task src-7' });
  });

  it('a task id that is not a number is 404, as JAX-RS answers', async () => {
    const res = await f.app.inject({ method: 'GET', url: '/connectors/src/tasks/x/status' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error_code: 404, message: 'HTTP 404 Not Found' });
  });

  it('POST /tasks/{id}/restart answers 204', async () => {
    const res = await f.app.inject({ method: 'POST', url: '/connectors/src/tasks/1/restart' });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
  });
});

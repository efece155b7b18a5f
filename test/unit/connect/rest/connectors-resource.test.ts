import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HerderError } from '../../../../src/connect/herder/herder.ts';
import { type RestFixture, restFixture, sinkConfig, sourceConfig } from './rest-fixture.ts';

let f: RestFixture;
beforeEach(async () => {
  f = await restFixture();
});
afterEach(async () => {
  await f.close();
});

async function create(name: string, config = sourceConfig(name), extra: object = {}) {
  return f.app.inject({ method: 'POST', url: '/connectors', payload: { name, config, ...extra } });
}

describe('GET /', () => {
  it('answers the Kafka Connect version it implements, and our own version and commit apart', async () => {
    const res = await f.app.inject({ method: 'GET', url: '/' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      version: '3.9.0',
      commit: 'abc123',
      kafka_cluster_id: 'test-cluster-id',
      connect_ts_version: '1.2.3',
      connect_ts_commit: 'abc123',
    });
  });
});

describe('POST /connectors', () => {
  it('creates a connector: 201, Location, and {name, config, tasks, type}', async () => {
    const res = await create('src');
    expect(res.statusCode).toBe(201);
    expect(res.headers.location).toBe('http://localhost:80/connectors/src');
    expect(res.json()).toEqual({
      name: 'src',
      config: sourceConfig('src'),
      tasks: [{ connector: 'src', task: 0 }],
      type: 'source',
    });
  });

  it('adds the name to the config when the body config has none', async () => {
    const { name: _, ...config } = sourceConfig('src');
    const res = await create('src', config as Record<string, string>);
    expect(res.statusCode).toBe(201);
    expect(res.json().config.name).toBe('src');
  });

  it('refuses an existing name with 409 "Connector X already exists"', async () => {
    await create('src');
    const res = await create('src');
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error_code: 409, message: 'Connector src already exists' });
  });

  it('refuses a config whose name differs from the request name with 400', async () => {
    const res = await create('src', sourceConfig('other'));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error_code: 400,
      message: "Connector name configuration (other) doesn't match connector name in the URL (src)",
    });
  });

  it('refuses an invalid config with 400 listing every error', async () => {
    const { file: _, ...config } = sourceConfig('src', { 'tasks.max': '0' });
    const res = await create('src', config as Record<string, string>);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error_code: 400,
      message: [
        'Connector configuration is invalid and contains the following 2 error(s):',
        'Invalid value 0 for configuration tasks.max: must be at least 1',
        'Missing required configuration "file" which has no default value.',
        'You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`',
      ].join('\n'),
    });
  });

  it('honours initial_state STOPPED: no tasks, status STOPPED', async () => {
    const res = await create('src', sourceConfig('src'), { initial_state: 'STOPPED' });
    expect(res.statusCode).toBe(201);
    expect(res.json().tasks).toEqual([]);
    const status = await f.app.inject({ method: 'GET', url: '/connectors/src/status' });
    expect(status.json().connector.state).toBe('STOPPED');
  });

  it('honours initial_state PAUSED', async () => {
    await create('src', sourceConfig('src'), { initial_state: 'PAUSED' });
    const status = await f.app.inject({ method: 'GET', url: '/connectors/src/status' });
    expect(status.json().connector.state).toBe('PAUSED');
    expect(status.json().tasks[0].state).toBe('PAUSED');
  });

  it('reads initial_state in any case and refuses another value with 400 naming the allowed', async () => {
    const paused = await create('src', sourceConfig('src'), { initial_state: 'paused' });
    const refused = await create('other', sourceConfig('other'), { initial_state: 'asleep' });
    expect(paused.statusCode).toBe(201);
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual({
      error_code: 400,
      message:
        'Invalid initial_state asleep: must be one of RUNNING, PAUSED, STOPPED (in any case)',
    });
  });

  it('answers bad JSON with 400 in the Connect error shape', async () => {
    const res = await f.app.inject({
      method: 'POST',
      url: '/connectors',
      headers: { 'content-type': 'application/json' },
      payload: '{"name": "x", ',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error_code).toBe(400);
    expect(Object.keys(res.json()).sort()).toEqual(['error_code', 'message']);
  });

  it('accepts application/json with a charset and refuses other media types with 415', async () => {
    const body = JSON.stringify({ name: 'src', config: sourceConfig('src') });
    const ok = await f.app.inject({
      method: 'POST',
      url: '/connectors',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      payload: body,
    });
    expect(ok.statusCode).toBe(201);
    const refused = await f.app.inject({
      method: 'POST',
      url: '/connectors',
      headers: { 'content-type': 'text/plain' },
      payload: body,
    });
    expect(refused.statusCode).toBe(415);
    expect(refused.json()).toEqual({ error_code: 415, message: 'HTTP 415 Unsupported Media Type' });
  });

  it('answers a body without config with 400 in the Connect error shape', async () => {
    const res = await f.app.inject({ method: 'POST', url: '/connectors', payload: { name: 'x' } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error_code: 400,
      message: "body must have required property 'config'",
    });
  });

  it('answers a rebalance in progress with 409', async () => {
    f.herder.failNextWith(
      new HerderError(
        'rebalance-needed',
        'Request cannot be completed because a rebalance is expected',
      ),
    );
    const res = await create('src');
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({
      error_code: 409,
      message:
        'Cannot complete request momentarily due to stale configuration (typically caused by a concurrent config change)',
    });
  });

  it('answers a herder timeout with 500 "Request timed out"', async () => {
    f.herder.failNextWith(new HerderError('timeout', 'took too long'));
    const res = await create('src');
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ error_code: 500, message: 'Request timed out' });
  });
});

describe('GET /connectors', () => {
  it('lists names', async () => {
    await create('a');
    await create('b');
    const res = await f.app.inject({ method: 'GET', url: '/connectors' });
    expect(res.statusCode).toBe(200);
    expect(res.json().sort()).toEqual(['a', 'b']);
  });

  it('expands status and info together', async () => {
    await create('a');
    const res = await f.app.inject({ method: 'GET', url: '/connectors?expand=status&expand=info' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      a: {
        status: {
          name: 'a',
          connector: { state: 'RUNNING', worker_id: '127.0.0.1:8083' },
          tasks: [{ id: 0, state: 'RUNNING', worker_id: '127.0.0.1:8083' }],
          type: 'source',
        },
        info: {
          name: 'a',
          config: sourceConfig('a'),
          tasks: [{ connector: 'a', task: 0 }],
          type: 'source',
        },
      },
    });
  });

  it('expands status alone, and ignores unknown expansions', async () => {
    await create('a');
    const status = await f.app.inject({ method: 'GET', url: '/connectors?expand=status' });
    expect(Object.keys(status.json().a)).toEqual(['status']);
    const unknown = await f.app.inject({ method: 'GET', url: '/connectors?expand=nothing' });
    expect(unknown.json()).toEqual({ a: {} });
  });
});

describe('GET|DELETE /connectors/{name}', () => {
  it('gets a connector, answers 404 "Connector X not found" for an unknown one', async () => {
    await create('a');
    expect((await f.app.inject({ method: 'GET', url: '/connectors/a' })).json().name).toBe('a');
    const res = await f.app.inject({ method: 'GET', url: '/connectors/nope' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error_code: 404, message: 'Connector nope not found' });
  });

  it('deletes with 204 and no body; then it is gone', async () => {
    await create('a');
    const res = await f.app.inject({ method: 'DELETE', url: '/connectors/a' });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect((await f.app.inject({ method: 'GET', url: '/connectors/a' })).statusCode).toBe(404);
    expect((await f.app.inject({ method: 'DELETE', url: '/connectors/a' })).statusCode).toBe(404);
  });

  it('accepts names that need URL encoding', async () => {
    await create('my connector');
    const res = await f.app.inject({ method: 'GET', url: '/connectors/my%20connector' });
    expect(res.statusCode).toBe(200);
    expect(res.json().name).toBe('my connector');
  });
});

describe('/connectors/{name}/config', () => {
  it('GET answers the stored config', async () => {
    await create('a');
    const res = await f.app.inject({ method: 'GET', url: '/connectors/a/config' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(sourceConfig('a'));
  });

  it('PUT creates with 201 and Location, then updates with 200', async () => {
    const first = await f.app.inject({
      method: 'PUT',
      url: '/connectors/s/config',
      payload: sinkConfig('s'),
    });
    expect(first.statusCode).toBe(201);
    expect(first.headers.location).toBe('http://localhost:80/connectors/s');
    expect(first.json().type).toBe('sink');
    const second = await f.app.inject({
      method: 'PUT',
      url: '/connectors/s/config',
      payload: sinkConfig('s', { 'tasks.max': '2' }),
    });
    expect(second.statusCode).toBe(200);
    expect(second.headers.location).toBeUndefined();
    expect(second.json().tasks).toEqual([
      { connector: 's', task: 0 },
      { connector: 's', task: 1 },
    ]);
  });

  it('PUT coerces number and boolean values to strings, as Connect reads them', async () => {
    const res = await f.app.inject({
      method: 'PUT',
      url: '/connectors/s/config',
      payload: { ...sinkConfig('s'), 'tasks.max': 2, 'errors.log.enable': true },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().config['tasks.max']).toBe('2');
    expect(res.json().config['errors.log.enable']).toBe('true');
  });

  it('PUT refuses a name mismatch with 400', async () => {
    const res = await f.app.inject({
      method: 'PUT',
      url: '/connectors/s/config',
      payload: sinkConfig('t'),
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe(
      "Connector name configuration (t) doesn't match connector name in the URL (s)",
    );
  });

  it('PUT reports a null value as a config error', async () => {
    const res = await f.app.inject({
      method: 'PUT',
      url: '/connectors/s/config',
      payload: { ...sinkConfig('s'), 'some.key': null },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toContain(
      'Null value can not be supplied as the configuration value.',
    );
  });

  it('PATCH merges keys, removes keys given null, answers 200 ConnectorInfo', async () => {
    await create('a', sourceConfig('a', { 'batch.size': '10' }));
    const res = await f.app.inject({
      method: 'PATCH',
      url: '/connectors/a/config',
      payload: { 'batch.size': null, topic: 'other' },
    });
    expect(res.statusCode).toBe(200);
    const config = res.json().config;
    expect(config.topic).toBe('other');
    expect(config).not.toHaveProperty('batch.size');
  });

  it('PATCH of an unknown connector is 404', async () => {
    const res = await f.app.inject({
      method: 'PATCH',
      url: '/connectors/nope/config',
      payload: { a: 'b' },
    });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error_code: 404, message: 'Connector nope not found' });
  });

  it('PATCH that makes the config invalid is 400', async () => {
    await create('a');
    const res = await f.app.inject({
      method: 'PATCH',
      url: '/connectors/a/config',
      payload: { file: null },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toContain(
      'Missing required configuration "file" which has no default value.',
    );
  });
});

describe('unknown paths', () => {
  it('answer 404 in the Connect error shape', async () => {
    const res = await f.app.inject({ method: 'GET', url: '/nothing/here' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error_code: 404, message: 'HTTP 404 Not Found' });
  });
});

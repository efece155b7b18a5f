import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RestFixture, restFixture, sinkConfig, sourceConfig } from './rest-fixture.ts';

let f: RestFixture;
beforeAll(async () => {
  f = await restFixture();
});
afterAll(async () => {
  await f.close();
});

describe('GET /connector-plugins', () => {
  it('lists connectors only by default, with class, type and version', async () => {
    const res = await f.app.inject({ method: 'GET', url: '/connector-plugins' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([
      { class: 'connect.file.FileStreamSinkConnector', type: 'sink', version: expect.any(String) },
      {
        class: 'connect.file.FileStreamSourceConnector',
        type: 'source',
        version: expect.any(String),
      },
    ]);
  });

  it('?connectorsOnly=false adds transformations, predicates, converters and header converters', async () => {
    const res = await f.app.inject({
      method: 'GET',
      url: '/connector-plugins?connectorsOnly=false',
    });
    expect(res.statusCode).toBe(200);
    const body = res.json() as { class: string; type: string }[];
    expect(new Set(body.map((p) => p.type))).toEqual(
      new Set(['sink', 'source', 'transformation', 'predicate', 'converter', 'header_converter']),
    );
    // Kafka Connect's order: header converters last, SimpleHeaderConverter among them.
    expect(body.at(-1)?.type).toBe('header_converter');
    expect(body).toContainEqual({
      class: 'org.apache.kafka.connect.storage.SimpleHeaderConverter',
      type: 'header_converter',
      version: expect.any(String),
    });
    expect(body).toContainEqual({
      class: 'connect.converters.JsonConverter',
      type: 'header_converter',
      version: expect.any(String),
    });
    expect(body).toContainEqual({
      class: 'connect.converters.JsonConverter',
      type: 'converter',
      version: expect.any(String),
    });
    expect(body).toContainEqual({
      class: 'connect.transforms.RegexRouter',
      type: 'transformation',
      version: expect.any(String),
    });
  });
});

describe('GET /connector-plugins/{plugin}/config', () => {
  it("answers the plugin's keys first, then the common connector keys", async () => {
    const res = await f.app.inject({
      method: 'GET',
      url: '/connector-plugins/FileStreamSource/config',
    });
    expect(res.statusCode).toBe(200);
    const keys = res.json() as { name: string }[];
    expect(keys.slice(0, 3).map((k) => k.name)).toEqual(['file', 'topic', 'batch.size']);
    expect(keys.map((k) => k.name)).toContain('tasks.max');
    expect(keys[0]).toEqual({
      name: 'file',
      type: 'STRING',
      required: true,
      default_value: null,
      importance: 'HIGH',
      documentation: expect.any(String),
      group: null,
      order: -1,
      width: 'NONE',
      display_name: 'file',
      dependents: [],
    });
  });

  it('answers a converter by its Kafka class name', async () => {
    const res = await f.app.inject({
      method: 'GET',
      url: '/connector-plugins/org.apache.kafka.connect.json.JsonConverter/config',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().map((k: { name: string }) => k.name)).toContain('schemas.enable');
  });

  it('is 404 "Unknown plugin X." for an unknown plugin', async () => {
    const res = await f.app.inject({ method: 'GET', url: '/connector-plugins/Nope/config' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error_code: 404, message: 'Unknown plugin Nope.' });
  });
});

describe('PUT /connector-plugins/{plugin}/config/validate', () => {
  it('answers ConfigInfos with no errors for a valid config', async () => {
    const res = await f.app.inject({
      method: 'PUT',
      url: '/connector-plugins/FileStreamSinkConnector/config/validate',
      payload: sinkConfig('s'),
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.name).toBe('org.apache.kafka.connect.file.FileStreamSinkConnector');
    expect(body.error_count).toBe(0);
    expect(body.groups).toEqual(['Common', 'Transforms', 'Predicates', 'Error Handling']);
  });

  it('answers 200 with per-field errors for an invalid config', async () => {
    const { file: _, ...config } = sourceConfig('s', { 'tasks.max': 'many' });
    const res = await f.app.inject({
      method: 'PUT',
      url: '/connector-plugins/FileStreamSource/config/validate',
      payload: config,
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.error_count).toBe(2);
    const file = body.configs.find((c: { value: { name: string } }) => c.value?.name === 'file');
    expect(file.value).toEqual({
      name: 'file',
      value: null,
      recommended_values: [],
      errors: ['Missing required configuration "file" which has no default value.'],
      visible: true,
    });
  });

  it('is 400 when the body names another connector class', async () => {
    const res = await f.app.inject({
      method: 'PUT',
      url: '/connector-plugins/FileStreamSink/config/validate',
      payload: sourceConfig('s'),
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error_code: 400,
      message:
        'Included connector type FileStreamSource does not match request type FileStreamSink',
    });
  });

  it('is 400 when the body has no connector.class', async () => {
    const res = await f.app.inject({
      method: 'PUT',
      url: '/connector-plugins/FileStreamSink/config/validate',
      payload: { topics: 'x' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error_code: 400,
      message: 'Connector config {topics=x} contains no connector type',
    });
  });

  it('is 400 for a connector class nobody provides', async () => {
    const res = await f.app.inject({
      method: 'PUT',
      url: '/connector-plugins/Nope/config/validate',
      payload: { 'connector.class': 'Nope' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toMatch(
      /^Failed to find any class that implements Connector and which name matches Nope/,
    );
  });
});

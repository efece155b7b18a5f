/**
 * Boolean query parameters read as JAX-RS's Boolean.valueOf reads them: any case of
 * "true" is true, anything else is false, and nothing is refused.
 */
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HerderError } from '../../../../src/connect/herder/herder.ts';
import { parseQueryBoolean } from '../../../../src/connect/rest/query-booleans.ts';
import { type RestServer, startRestServer } from '../../../../src/connect/rest/rest-server.ts';
import { InMemoryHerder } from './in-memory-herder.ts';
import { type RestFixture, restFixture, sourceConfig, testPlugins } from './rest-fixture.ts';

describe('parseQueryBoolean', () => {
  it.each([
    ['true', true],
    ['TRUE', true],
    ['True', true],
    ['tRuE', true],
    ['false', false],
    ['FALSE', false],
    ['1', false],
    ['yes', false],
    ['', false],
    [' true', false],
  ])('%j is %s', (text, expected) => {
    expect(parseQueryBoolean(text)).toBe(expected);
  });

  it('takes the first of repeated values', () => {
    expect(parseQueryBoolean(['TRUE', 'false'])).toBe(true);
    expect(parseQueryBoolean(['no', 'true'])).toBe(false);
  });
});

describe('boolean query parameters on the routes', () => {
  let f: RestFixture;
  beforeEach(async () => {
    f = await restFixture();
    await f.app.inject({
      method: 'POST',
      url: '/connectors',
      payload: { name: 'src', config: sourceConfig('src') },
    });
  });
  afterEach(async () => {
    await f.close();
  });

  it('includeTasks=TRUE restarts connector and tasks (202), not a 400', async () => {
    const res = await f.app.inject({
      method: 'POST',
      url: '/connectors/src/restart?includeTasks=TRUE&onlyFailed=False',
    });
    expect(res.statusCode).toBe(202);
    expect(res.json().tasks).toHaveLength(1);
  });

  it('includeTasks=1 and onlyFailed=yes are false: the connector-only restart (204)', async () => {
    const res = await f.app.inject({
      method: 'POST',
      url: '/connectors/src/restart?includeTasks=1&onlyFailed=yes',
    });
    expect(res.statusCode).toBe(204);
  });

  it('connectorsOnly=FALSE lists every plugin kind; connectorsOnly=0 is false too', async () => {
    for (const value of ['FALSE', '0', 'nope']) {
      const res = await f.app.inject({
        method: 'GET',
        url: `/connector-plugins?connectorsOnly=${value}`,
      });
      expect(res.statusCode, value).toBe(200);
      const types = new Set((res.json() as { type: string }[]).map((p) => p.type));
      expect(types.has('converter'), value).toBe(true);
    }
  });

  it('a blank connectorsOnly is its default (true), as Jersey reads a primitive boolean', async () => {
    for (const url of [
      '/connector-plugins?connectorsOnly=',
      '/connector-plugins?connectorsOnly=%20',
    ]) {
      const res = await f.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      const types = new Set((res.json() as { type: string }[]).map((p) => p.type));
      expect(types, url).toEqual(new Set(['source', 'sink']));
    }
  });

  it('connectorsOnly=True lists connectors only', async () => {
    const res = await f.app.inject({
      method: 'GET',
      url: '/connector-plugins?connectorsOnly=True',
    });
    expect(res.statusCode).toBe(200);
    const types = new Set((res.json() as { type: string }[]).map((p) => p.type));
    expect(types).toEqual(new Set(['source', 'sink']));
  });
});

describe('forward', () => {
  const servers: RestServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  it('a forward value that is not "true" is false: already forwarded, so 409, never a third hop', async () => {
    const herder = new InMemoryHerder(await testPlugins());
    const server = await startRestServer({
      herder,
      plugins: herder.plugins(),
      logger: pino({ level: 'silent' }),
      listeners: ['http://127.0.0.1:0'],
    });
    servers.push(server);
    herder.failNextWith(
      new HerderError('not-leader', 'not the leader', { leaderUrl: 'http://127.0.0.1:1' }),
    );
    const res = await fetch(`${server.url}/connectors?forward=no`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x', config: sourceConfig('x') }),
    });
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({
      error_code: 409,
      message: 'Cannot complete request because of a conflicting operation (e.g. worker rebalance)',
    });
  });
});

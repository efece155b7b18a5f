import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getLogger, rootLogger } from '../../../../src/util/logger.ts';
import { type RestFixture, restFixture } from './rest-fixture.ts';

let f: RestFixture;
const rootLevel = rootLogger.level;
beforeEach(async () => {
  f = await restFixture({ now: () => 1_700_000_000_000 });
});
afterEach(async () => {
  rootLogger.level = rootLevel;
  await f.close();
});

describe('/admin/loggers', () => {
  it('GET lists root and named loggers with level and last_modified', async () => {
    getLogger('loggers-test.a').level = 'warn';
    const res = await f.app.inject({ method: 'GET', url: '/admin/loggers' });
    expect(res.statusCode).toBe(200);
    expect(res.json().root).toEqual({ level: rootLevel.toUpperCase(), last_modified: null });
    expect(res.json()['loggers-test.a']).toEqual({ level: 'WARN', last_modified: null });
  });

  it('PUT sets the level of a namespace and the loggers below it at run time', async () => {
    const parent = getLogger('loggers-test.put');
    const child = getLogger('loggers-test.put.child');
    const other = getLogger('loggers-test.putother');
    other.level = 'warn';
    const res = await f.app.inject({
      method: 'PUT',
      url: '/admin/loggers/loggers-test.put',
      payload: { level: 'debug' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(['loggers-test.put', 'loggers-test.put.child']);
    expect(parent.isLevelEnabled('debug')).toBe(true);
    expect(child.level).toBe('debug');
    expect(other.level).toBe('warn');
    const one = await f.app.inject({ method: 'GET', url: '/admin/loggers/loggers-test.put.child' });
    expect(one.json()).toEqual({ level: 'DEBUG', last_modified: 1_700_000_000_000 });
  });

  it('GET of an unknown logger is 404 "Logger X not found."', async () => {
    const res = await f.app.inject({ method: 'GET', url: '/admin/loggers/no.such.logger' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error_code: 404, message: 'Logger no.such.logger not found.' });
  });

  it('PUT without a level is 400; with an unknown level 404, as Connect answers', async () => {
    const none = await f.app.inject({ method: 'PUT', url: '/admin/loggers/root', payload: {} });
    expect(none.statusCode).toBe(400);
    expect(none.json()).toEqual({
      error_code: 400,
      message: "Desired 'level' parameter was not specified in request.",
    });
    const bad = await f.app.inject({
      method: 'PUT',
      url: '/admin/loggers/root',
      payload: { level: 'LOUD' },
    });
    expect(bad.statusCode).toBe(404);
    expect(bad.json()).toEqual({ error_code: 404, message: "invalid log level 'LOUD'." });
  });

  it('PUT ?scope=cluster asks the herder and answers 204', async () => {
    const res = await f.app.inject({
      method: 'PUT',
      url: '/admin/loggers/connect?scope=cluster',
      payload: { level: 'INFO' },
    });
    expect(res.statusCode).toBe(204);
    expect(f.herder.clusterLoggerLevels).toEqual([{ namespace: 'connect', level: 'INFO' }]);
  });
});

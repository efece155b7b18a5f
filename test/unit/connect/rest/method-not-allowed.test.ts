import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RestFixture, restFixture } from './rest-fixture.ts';

let f: RestFixture;
beforeEach(async () => {
  f = await restFixture();
});
afterEach(async () => {
  await f.close();
});

describe('a known path with a method it does not serve', () => {
  it.each([
    ['DELETE', '/connectors'],
    ['POST', '/connectors/any/status'],
    ['PUT', '/connectors/any/status'],
    ['POST', '/connector-plugins'],
    ['DELETE', '/connectors/any/tasks/0/status'],
  ])('%s %s is 405 with Kafka Connect body, not 404', async (method, url) => {
    const res = await f.app.inject({ method: method as 'GET', url });
    expect(res.statusCode).toBe(405);
    expect(res.json()).toEqual({ error_code: 405, message: 'HTTP 405 Method Not Allowed' });
  });

  it('an unknown path stays 404 HTTP 404 Not Found', async () => {
    const res = await f.app.inject({ method: 'DELETE', url: '/no/such/path' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error_code: 404, message: 'HTTP 404 Not Found' });
  });
});

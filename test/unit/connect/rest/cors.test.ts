/**
 * CORS from access.control.allow.origin / access.control.allow.methods, answered as
 * Kafka Connect's Jetty CrossOriginFilter answers, and OPTIONS as Jersey answers it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type RestFixture, restFixture } from './rest-fixture.ts';

let f: RestFixture | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

async function app(allowedOrigins: string, allowedMethods = '') {
  f = await restFixture({ cors: { allowedOrigins, allowedMethods } });
  return f.app;
}

describe('CORS', () => {
  it('a request from an allowed origin gets its origin back, credentials and Vary', async () => {
    const res = await (await app('https://ui.example')).inject({
      method: 'GET',
      url: '/connectors',
      headers: { origin: 'https://ui.example' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('https://ui.example');
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    expect(res.headers.vary).toContain('Origin');
  });

  it('* allows any origin and still answers the origin itself, without Vary', async () => {
    const res = await (await app('*')).inject({
      method: 'GET',
      url: '/connectors',
      headers: { origin: 'http://anything:3000' },
    });
    expect(res.headers['access-control-allow-origin']).toBe('http://anything:3000');
    expect(res.headers.vary ?? '').not.toContain('Origin');
  });

  it('a wildcard entry matches subdomains; another origin gets no CORS header but is served', async () => {
    const a = await app('https://*.example.com,http://localhost:3000');
    const ok = await a.inject({
      method: 'GET',
      url: '/connectors',
      headers: { origin: 'https://ui.eu.example.com' },
    });
    expect(ok.headers['access-control-allow-origin']).toBe('https://ui.eu.example.com');
    const other = await a.inject({
      method: 'GET',
      url: '/connectors',
      headers: { origin: 'https://evil.test' },
    });
    expect(other.statusCode).toBe(200);
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('a preflight for an allowed method is 200 with methods, headers and max age', async () => {
    const res = await (await app('https://ui.example', 'GET,POST,PUT,DELETE')).inject({
      method: 'OPTIONS',
      url: '/connectors/x/config',
      headers: {
        origin: 'https://ui.example',
        'access-control-request-method': 'PUT',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('https://ui.example');
    expect(res.headers['access-control-allow-methods']).toBe('GET,POST,PUT,DELETE');
    expect(res.headers['access-control-allow-headers']).toBe(
      'X-Requested-With,Content-Type,Accept,Origin',
    );
    expect(res.headers['access-control-max-age']).toBe('1800');
    expect(res.headers.allow).toBe('GET,HEAD,PATCH,PUT,OPTIONS');
  });

  it('without access.control.allow.methods only GET, POST and HEAD pass a preflight', async () => {
    const a = await app('https://ui.example');
    const preflight = (method: string) =>
      a.inject({
        method: 'OPTIONS',
        url: '/connectors/x',
        headers: { origin: 'https://ui.example', 'access-control-request-method': method },
      });
    const post = await preflight('POST');
    expect(post.headers['access-control-allow-methods']).toBe('GET,POST,HEAD');
    const del = await preflight('DELETE');
    expect(del.statusCode).toBe(200);
    expect(del.headers['access-control-allow-origin']).toBeUndefined();
    expect(del.headers['access-control-allow-methods']).toBeUndefined();
  });

  it('a preflight asking for a header outside the allowed ones gets no CORS header', async () => {
    const res = await (await app('*')).inject({
      method: 'OPTIONS',
      url: '/connectors',
      headers: {
        origin: 'https://ui.example',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'x-custom',
      },
    });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('a blank access.control.allow.origin gives no CORS header', async () => {
    const res = await (await app('  ')).inject({
      method: 'GET',
      url: '/connectors',
      headers: { origin: 'https://ui.example' },
    });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('OPTIONS on an unknown path stays 404', async () => {
    const res = await (await app('*')).inject({
      method: 'OPTIONS',
      url: '/no/such/path',
      headers: { origin: 'https://ui.example', 'access-control-request-method': 'GET' },
    });
    expect(res.statusCode).toBe(404);
  });
});

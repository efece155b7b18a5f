import { afterEach, describe, expect, it } from 'vitest';
import { type RestFixture, restFixture } from './rest-fixture.ts';

let fixture: RestFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

const never = () => new Promise<void>(() => {});

describe('GET /health (KIP-1017)', () => {
  it('answers 200 healthy once the herder loop runs a no-op', async () => {
    fixture = await restFixture();

    const res = await fixture.app.inject({ method: 'GET', url: '/health' });

    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      status: 'healthy',
      message: 'Worker has completed startup and is ready to handle requests.',
    });
  });

  it('answers 503 starting while a worker that has not joined yet cannot run it', async () => {
    fixture = await restFixture({ healthCheckTimeoutMs: 50 });
    fixture.herder.ready = false;
    fixture.herder.health = never;

    const res = await fixture.app.inject({ method: 'GET', url: '/health' });

    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ status: 'starting', message: 'Worker is still starting up.' });
  });

  it("answers 500 unhealthy when a started worker's loop is stuck", async () => {
    fixture = await restFixture({ healthCheckTimeoutMs: 50 });
    fixture.herder.health = never;

    const res = await fixture.app.inject({ method: 'GET', url: '/health' });

    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({
      status: 'unhealthy',
      message:
        'Worker was unable to handle this request and may be unable to handle other requests.',
    });
  });
});

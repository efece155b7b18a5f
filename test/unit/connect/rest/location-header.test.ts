/**
 * Location of a created connector: absolute against the URL the client called, as
 * JAX-RS's Response.created makes it, and kept when a follower forwards the write to
 * the leader (naming the follower the client called, as Connect builds it there).
 */
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { HerderError } from '../../../../src/connect/herder/herder.ts';
import { type RestServer, startRestServer } from '../../../../src/connect/rest/rest-server.ts';
import { InMemoryHerder } from './in-memory-herder.ts';
import { sourceConfig, testPlugins } from './rest-fixture.ts';

const servers: RestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(herder: InMemoryHerder): Promise<RestServer> {
  const server = await startRestServer({
    herder,
    plugins: herder.plugins(),
    logger: pino({ level: 'silent' }),
    listeners: ['http://127.0.0.1:0'],
  });
  servers.push(server);
  return server;
}

async function send(method: string, url: string, body: unknown) {
  return fetch(url, {
    method,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

describe('Location', () => {
  it('POST /connectors answers an absolute Location on the worker called', async () => {
    const server = await serve(new InMemoryHerder(await testPlugins()));
    const res = await send('POST', `${server.url}/connectors`, {
      name: 'my conn',
      config: sourceConfig('my conn'),
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`${server.url}/connectors/my%20conn`);
  });

  it('a POST forwarded from a follower keeps Location, naming the follower', async () => {
    const plugins = await testPlugins();
    const leader = await serve(new InMemoryHerder(plugins));
    const followerHerder = new InMemoryHerder(plugins);
    const follower = await serve(followerHerder);
    followerHerder.failNextWith(
      new HerderError('not-leader', 'not the leader', { leaderUrl: leader.url }),
    );
    const res = await send('POST', `${follower.url}/connectors`, {
      name: 'fwd',
      config: sourceConfig('fwd'),
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`${follower.url}/connectors/fwd`);
  });

  it('a PUT that creates, forwarded, keeps Location; one that updates has none', async () => {
    const plugins = await testPlugins();
    const leader = await serve(new InMemoryHerder(plugins));
    const followerHerder = new InMemoryHerder(plugins);
    const follower = await serve(followerHerder);
    const notLeader = () =>
      followerHerder.failNextWith(
        new HerderError('not-leader', 'not the leader', { leaderUrl: leader.url }),
      );
    notLeader();
    const created = await send('PUT', `${follower.url}/connectors/p/config`, sourceConfig('p'));
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`${follower.url}/connectors/p`);
    notLeader();
    const updated = await send('PUT', `${follower.url}/connectors/p/config`, sourceConfig('p'));
    expect(updated.status).toBe(200);
    expect(updated.headers.get('location')).toBeNull();
  });
});

/**
 * Forwarding to the leader over real sockets: a follower whose herder answers "not
 * leader" passes the request to the leader's REST server and answers what it answers.
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

async function post(url: string, body: unknown) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('forwarding to the leader', () => {
  it('a not-leader error forwards the request with its body; the leader creates the connector', async () => {
    const plugins = await testPlugins();
    const leaderHerder = new InMemoryHerder(plugins);
    const leader = await serve(leaderHerder);
    const followerHerder = new InMemoryHerder(plugins);
    const follower = await serve(followerHerder);
    followerHerder.failNextWith(
      new HerderError('not-leader', 'not the leader', { leaderUrl: leader.url }),
    );

    const res = await post(`${follower.url}/connectors`, {
      name: 'fwd',
      config: sourceConfig('fwd'),
    });
    expect(res.status).toBe(201);
    expect(res.body.name).toBe('fwd');
    expect(await leaderHerder.connectors()).toEqual(['fwd']);
    expect(await followerHerder.connectors()).toEqual([]);
  });

  it("relays the leader's error answer unchanged", async () => {
    const plugins = await testPlugins();
    const leaderHerder = new InMemoryHerder(plugins);
    const leader = await serve(leaderHerder);
    await leaderHerder.putConnectorConfig('dup', sourceConfig('dup'), false);
    const followerHerder = new InMemoryHerder(plugins);
    const follower = await serve(followerHerder);
    followerHerder.failNextWith(
      new HerderError('not-leader', 'not the leader', { leaderUrl: leader.url }),
    );

    const res = await post(`${follower.url}/connectors`, {
      name: 'dup',
      config: sourceConfig('dup'),
    });
    expect(res).toEqual({
      status: 409,
      body: { error_code: 409, message: 'Connector dup already exists' },
    });
  });

  it('a request already forwarded twice (forward=false) is not forwarded again: 409', async () => {
    const herder = new InMemoryHerder(await testPlugins());
    const server = await serve(herder);
    herder.failNextWith(
      new HerderError('not-leader', 'not the leader', { leaderUrl: 'http://127.0.0.1:1' }),
    );
    const res = await post(`${server.url}/connectors?forward=false`, {
      name: 'x',
      config: sourceConfig('x'),
    });
    expect(res).toEqual({
      status: 409,
      body: {
        error_code: 409,
        message:
          'Cannot complete request because of a conflicting operation (e.g. worker rebalance)',
      },
    });
  });

  it('no known leader is 409 with Connect text', async () => {
    const herder = new InMemoryHerder(await testPlugins());
    const server = await serve(herder);
    herder.failNextWith(new HerderError('not-leader', 'not the leader'));
    const res = await post(`${server.url}/connectors`, { name: 'x', config: sourceConfig('x') });
    expect(res).toEqual({
      status: 409,
      body: {
        error_code: 409,
        message:
          'Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway.',
      },
    });
  });
});

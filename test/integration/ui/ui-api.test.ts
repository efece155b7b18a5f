/**
 * The status page's server side without a browser: its static files (redirect, types,
 * Content-Security-Policy), the read-only /ui/api endpoints against a real embedded
 * broker (topics with offsets and configs, a bounded tail with keys, headers and
 * values, groups with lag), their refusals with Kafka Connect's error body, and the
 * bundle made in memory when ui/dist is missing or stale.
 */
import { cpSync, mkdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { Kafka, logLevel } from 'kafkajs';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRestApp } from '../../../src/connect/rest/rest-server.ts';
import { uiBundle } from '../../../src/connect/rest/ui-bundle.ts';
import { ClusterClient } from '../../../src/protocol/client/cluster-client.ts';
import { repositoryRoot } from '../../../src/util/code-layout.ts';
import { startTestBroker, type TestBroker } from '../../helpers/broker.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import { InMemoryHerder } from '../../unit/connect/rest/in-memory-herder.ts';
import { testPlugins } from '../../unit/connect/rest/rest-fixture.ts';

const silent = pino({ level: 'silent' });
let broker: TestBroker;
let client: ClusterClient;
let app: FastifyInstance;

beforeAll(async () => {
  broker = await startTestBroker();
  client = new ClusterClient(broker.bootstrap, { clientId: 'ui-api-test' });
  const plugins = await testPlugins();
  app = buildRestApp({
    herder: new InMemoryHerder(plugins),
    plugins,
    logger: silent,
    kafka: { clusterClient: () => client },
  });
  await app.ready();
  const kafka = new Kafka({ brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    waitForLeaders: true,
    topics: [
      { topic: 'orders', numPartitions: 2 },
      {
        topic: 'compacted',
        numPartitions: 1,
        configEntries: [{ name: 'cleanup.policy', value: 'compact' }],
      },
    ],
  });
  await admin.disconnect();
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({
    topic: 'orders',
    messages: Array.from({ length: 30 }, (_, i) => ({
      partition: 0,
      key: `k${i}`,
      value: JSON.stringify({ n: i }),
      headers: { origin: 'test' },
    })),
  });
  await producer.send({
    topic: 'orders',
    messages: [{ partition: 1, key: null, value: Buffer.from([0xff, 0xfe, 0x00]) }],
  });
  await producer.disconnect();
  // A group with committed offsets and no members: lag is end minus committed.
  const consumerAdmin = kafka.admin();
  await consumerAdmin.connect();
  await consumerAdmin.setOffsets({
    groupId: 'reader',
    topic: 'orders',
    partitions: [{ partition: 0, offset: '10' }],
  });
  await consumerAdmin.disconnect();
});

afterAll(async () => {
  await app?.close();
  client?.close();
  await broker?.stop();
});

const get = async (url: string) => {
  const answer = await app.inject({ method: 'GET', url });
  return { status: answer.statusCode, headers: answer.headers, body: answer.body };
};
const getJson = async (url: string) => {
  const answer = await get(url);
  return { status: answer.status, body: JSON.parse(answer.body) };
};

describe('the status page files', () => {
  it('GET /ui redirects to /ui/ with a relative location, which serves the page from this origin only', async () => {
    const redirect = await get('/ui');
    expect(redirect.status).toBe(302);
    expect(redirect.headers.location).toBe('ui/');
    expect((await get('/ui?refresh=500')).headers.location).toBe('ui/?refresh=500');
    const page = await get('/ui/');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toContain("default-src 'self'");
    expect(page.body).toContain('src="app.js"');
    const script = await get('/ui/app.js');
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect((await get('/ui/app.css')).status).toBe(200);
  });

  it('an unknown file under /ui/ is a 404 with the error body', async () => {
    expect(await getJson('/ui/nothing.js')).toEqual({
      status: 404,
      body: { error_code: 404, message: 'HTTP 404 Not Found' },
    });
  });
});

describe('GET /ui/api/topics', () => {
  it('lists topics with partitions, offsets, cleanup policy and retention', async () => {
    const { status, body } = await getJson('/ui/api/topics');
    expect(status).toBe(200);
    const orders = body.topics.find((t: { name: string }) => t.name === 'orders');
    expect(orders.partitions).toEqual([
      { partition: 0, leader: 1, startOffset: 0, endOffset: 30 },
      { partition: 1, leader: 1, startOffset: 0, endOffset: 1 },
    ]);
    expect(orders.configs['cleanup.policy']).toBe('delete');
    expect(orders.configs['retention.ms']).toMatch(/^-?\d+$/);
    const compacted = body.topics.find((t: { name: string }) => t.name === 'compacted');
    expect(compacted.configs['cleanup.policy']).toBe('compact');
  });
});

describe('GET /ui/api/topics/:topic/partitions/:partition/records', () => {
  it('answers the last N records of a partition with keys, headers and values', async () => {
    const { status, body } = await getJson('/ui/api/topics/orders/partitions/0/records?limit=3');
    expect(status).toBe(200);
    expect(body.endOffset).toBe(30);
    expect(body.records.map((r: { offset: number }) => r.offset)).toEqual([27, 28, 29]);
    expect(body.records[2]).toMatchObject({
      key: { encoding: 'utf8', data: 'k29', truncated: false },
      value: { encoding: 'utf8', data: '{"n":29}' },
      headers: [{ key: 'origin', value: { encoding: 'utf8', data: 'test' } }],
    });
  });

  it('shows bytes that are not UTF-8 as base64, and a null key as null', async () => {
    const { body } = await getJson('/ui/api/topics/orders/partitions/1/records');
    expect(body.records).toHaveLength(1);
    expect(body.records[0].key).toBeNull();
    expect(body.records[0].value).toMatchObject({ encoding: 'base64', data: '//4A', size: 3 });
  });

  it.each([
    ['/ui/api/topics/bad%20name/partitions/0/records', "Topic name 'bad name' is illegal"],
    [
      '/ui/api/topics/orders/partitions/x/records',
      "partition must be an integer from 0 to 2147483647, not 'x'",
    ],
    ['/ui/api/topics/orders/partitions/-1/records', 'partition must be an integer'],
    [
      '/ui/api/topics/orders/partitions/0/records?limit=0',
      "limit must be an integer from 1 to 100, not '0'",
    ],
    [
      '/ui/api/topics/orders/partitions/0/records?limit=101',
      "limit must be an integer from 1 to 100, not '101'",
    ],
    ['/ui/api/topics/orders/partitions/0/records?limit=ten', 'limit must be an integer'],
    ['/ui/api/topics/orders/partitions/0/records?offset=3', 'Unknown query parameter(s): offset'],
    ['/ui/api/topics?all=true', 'Unknown query parameter(s): all'],
    ['/ui/api/groups?lag=1', 'Unknown query parameter(s): lag'],
  ])('refuses %s with a 400 that says why', async (url, message) => {
    const { status, body } = await getJson(url);
    expect(status).toBe(400);
    expect(body.error_code).toBe(400);
    expect(body.message).toContain(message);
  });

  it('answers 404 with the error body for a topic or partition the cluster lacks', async () => {
    expect(await getJson('/ui/api/topics/nowhere/partitions/0/records')).toEqual({
      status: 404,
      body: { error_code: 404, message: 'Topic nowhere not found' },
    });
    expect(await getJson('/ui/api/topics/orders/partitions/5/records')).toEqual({
      status: 404,
      body: { error_code: 404, message: 'Topic orders has no partition 5 (it has 2)' },
    });
  });
});

describe('GET /ui/api/groups', () => {
  it('shows a group with its committed offsets and lag', async () => {
    const { status, body } = await getJson('/ui/api/groups');
    expect(status).toBe(200);
    const reader = body.groups.find((g: { groupId: string }) => g.groupId === 'reader');
    expect(reader).toMatchObject({
      members: [],
      offsets: [{ topic: 'orders', partition: 0, committedOffset: 10, endOffset: 30, lag: 20 }],
      totalLag: 20,
    });
  });
});

describe('a REST server without a Kafka client', () => {
  it('refuses the topic views by name with a 503', async () => {
    const plugins = await testPlugins();
    const bare = buildRestApp({ herder: new InMemoryHerder(plugins), plugins, logger: silent });
    try {
      const answer = await bare.inject({ method: 'GET', url: '/ui/api/topics' });
      expect(answer.statusCode).toBe(503);
      expect(JSON.parse(answer.body).message).toContain('no Kafka client');
    } finally {
      await bare.close();
    }
  });
});

describe('the bundle', () => {
  /** A tree with ui/ (sources and build module) and the repository's node_modules. */
  function uiTree(): string {
    const root = useTmpDir('ui-bundle-');
    mkdirSync(join(root, 'ui'));
    cpSync(join(repositoryRoot, 'ui/src'), join(root, 'ui/src'), { recursive: true });
    cpSync(join(repositoryRoot, 'ui/build-ui.mjs'), join(root, 'ui/build-ui.mjs'));
    symlinkSync(join(repositoryRoot, 'node_modules'), join(root, 'node_modules'));
    return root;
  }

  it('is bundled in memory from ui/src when ui/dist is missing, and read from ui/dist when it is newer than the sources', async () => {
    const missing = uiTree();
    const built = await uiBundle(silent, missing);
    expect(built.origin).toBe('memory');
    expect([...built.files.keys()].sort()).toEqual(['app.css', 'app.js', 'index.html']);

    const fresh = uiTree();
    mkdirSync(join(fresh, 'ui/dist'));
    writeFileSync(join(fresh, 'ui/dist/index.html'), '<p>built</p>');
    writeFileSync(join(fresh, 'ui/dist/.build-stamp'), 'now\n');
    const read = await uiBundle(silent, fresh);
    expect(read.origin).toBe('dist');
    expect(new TextDecoder().decode(read.files.get('index.html'))).toBe('<p>built</p>');
  });

  it('is bundled anew when a source is newer than ui/dist', async () => {
    const stale = uiTree();
    mkdirSync(join(stale, 'ui/dist'));
    writeFileSync(join(stale, 'ui/dist/index.html'), '<p>old</p>');
    writeFileSync(join(stale, 'ui/dist/.build-stamp'), 'then\n');
    const past = new Date(Date.now() - 60_000);
    utimesSync(join(stale, 'ui/dist/.build-stamp'), past, past);
    const bundle = await uiBundle(silent, stale);
    expect(bundle.origin).toBe('memory');
    expect(new TextDecoder().decode(bundle.files.get('index.html'))).toContain('app.js');
  });
});

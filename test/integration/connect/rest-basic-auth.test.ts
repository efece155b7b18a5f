/**
 * REST Basic authentication as Kafka Connect's BasicAuthSecurityRestExtension: the same
 * worker keys, JAAS file and credentials file, on a standalone worker (in process), on
 * the CLI (what it refuses, exit code 2) and on a two-worker cluster of `connect
 * worker` processes, where a write sent to a follower is forwarded to the leader with
 * the caller's credentials and exactly-once tasks start after the follower asked the
 * leader to fence (the internal request Kafka lets through without credentials).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BASIC_AUTH_EXTENSION } from '../../../src/connect/rest/basic-auth.ts';
import { startTestBroker } from '../../helpers/broker.ts';
import { runConnect } from '../../helpers/processes.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import { waitFor } from '../../helpers/wait.ts';
import {
  baseOverrides,
  startWorker,
  type WorkerProcess,
} from '../distributed/distributed-helpers.ts';
import { useStandalone, workerConfig } from '../standalone/standalone-helpers.ts';

const MODULE = 'org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule';
const ALICE = `Basic ${Buffer.from('alice:s3cret').toString('base64')}`;
const WRONG = `Basic ${Buffer.from('alice:guess').toString('base64')}`;

/** Kafka's documented layout: a JAAS file naming a user=password file. */
function authFiles(): string {
  const dir = useTmpDir('rest-auth-');
  const passwords = join(dir, 'connect.password');
  writeFileSync(passwords, 'alice=s3cret\nbob=b0b\n');
  const jaas = join(dir, 'connect_jaas.conf');
  writeFileSync(jaas, `KafkaConnect {\n  ${MODULE} required\n  file="${passwords}";\n};\n`);
  return jaas;
}

async function call(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: unknown,
): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

describe('REST Basic authentication (BasicAuthSecurityRestExtension)', () => {
  it('answers 401 without the right credentials on every route, and serves them with', async () => {
    const broker = await startTestBroker();
    onTestFinished(() => broker.stop());
    const dir = useTmpDir('rest-auth-standalone-');
    const worker = await useStandalone(
      workerConfig(broker.bootstrap, dir, {
        'rest.extension.classes': BASIC_AUTH_EXTENSION,
        'java.security.auth.login.config': authFiles(),
        'access.control.allow.origin': 'http://ui.example',
      }),
    );
    const base = worker.restUrl;
    for (const [method, path] of [
      ['GET', '/'],
      ['GET', '/connectors'],
      ['GET', '/connector-plugins'],
      ['GET', '/health'],
      ['GET', '/metrics'],
      ['GET', '/ui/'],
      ['GET', '/admin/loggers'],
      ['DELETE', '/connectors/none'],
    ] as const) {
      for (const headers of [
        {} as Record<string, string>,
        { authorization: WRONG },
        { authorization: `Basic ${Buffer.from('carol:s3cret').toString('base64')}` },
        { authorization: 'Bearer s3cret' },
        { authorization: 'Basic %%%' },
      ]) {
        const r = await call(base, method, path, headers);
        expect(r.status, `${method} ${path} ${JSON.stringify(headers)}`).toBe(401);
        expect(JSON.parse(r.text)).toEqual({
          error_code: 401,
          message: 'User cannot access the resource.',
        });
        expect(r.headers.get('www-authenticate')).toMatch(/^Basic realm="Kafka Connect"/);
      }
    }
    expect((await call(base, 'GET', '/connectors', { authorization: ALICE })).text).toBe('[]');
    expect((await call(base, 'GET', '/ui/', { authorization: ALICE })).status).toBe(200);
    const bob = `Basic ${Buffer.from('bob:b0b').toString('base64')}`;
    const created = await call(
      base,
      'PUT',
      '/connectors/gen/config',
      { authorization: bob },
      {
        'connector.class': 'DatagenConnector',
        topic: 'gen',
        iterations: '10',
      },
    );
    expect(created.status, created.text).toBe(201);
    await waitFor(
      'the connector running',
      async () => {
        const s = await call(base, 'GET', '/connectors/gen/status', { authorization: ALICE });
        return s.status === 200 && JSON.parse(s.text).tasks?.[0]?.state === 'RUNNING'
          ? true
          : undefined;
      },
      30_000,
    );
    // Workers' internal fencing request goes through as in Kafka (standalone has no
    // exactly-once, so the herder answers it, not the filter).
    expect((await call(base, 'PUT', '/connectors/gen/fence')).status).not.toBe(401);
    // A browser's CORS preflight carries no credentials; it is answered as before.
    const preflight = await call(base, 'OPTIONS', '/connectors', {
      origin: 'http://ui.example',
      'access-control-request-method': 'GET',
    });
    expect(preflight.status).toBe(200);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('http://ui.example');
    // The preflight's answer is no way in: the request itself still needs credentials.
    expect((await call(base, 'GET', '/connectors', { origin: 'http://ui.example' })).status).toBe(
      401,
    );
  });

  it('refuses to start, exit code 2, where the config asks for security it cannot give', async () => {
    const other = await runConnect([
      'worker',
      '-o',
      'rest.extension.classes=com.example.OAuthRestExtension',
    ]);
    expect(other.code).toBe(2);
    expect(other.output).toContain(
      `error: rest.extension.classes: com.example.OAuthRestExtension is a Java REST extension this runtime cannot load; the one it implements is ${BASIC_AUTH_EXTENSION}`,
    );
    const files = useTmpDir('rest-auth-cli-');
    writeFileSync(
      join(files, 'worker.properties'),
      `rest.extension.classes=${BASIC_AUTH_EXTENSION}\n`,
    );
    writeFileSync(join(files, 'gen.properties'), 'name=gen\nconnector.class=DatagenConnector\n');
    const noJaas = await runConnect(
      ['standalone', join(files, 'worker.properties'), join(files, 'gen.properties')],
      { env: { KAFKA_OPTS: '-Xmx512m' } },
    );
    expect(noJaas.code).toBe(2);
    expect(noJaas.output.join('\n')).toMatch(
      /error: rest.extension.classes: BasicAuthSecurityRestExtension needs a JAAS file with a KafkaConnect entry/,
    );
    const dir = useTmpDir('rest-auth-ldap-');
    const ldap = join(dir, 'jaas.conf');
    writeFileSync(ldap, 'KafkaConnect {\n  com.example.LdapLoginModule required;\n};\n');
    const wrongModule = await runConnect(
      ['worker', '-o', `rest.extension.classes=${BASIC_AUTH_EXTENSION}`],
      { env: { KAFKA_OPTS: `-Djava.security.auth.login.config=${ldap}` } },
    );
    expect(wrongModule.code).toBe(2);
    expect(wrongModule.output.join('\n')).toMatch(
      /the KafkaConnect login module com\.example\.LdapLoginModule is a Java class this runtime cannot run/,
    );
  });

  it('in a cluster: forwards a write sent to the follower with its credentials, and exactly-once tasks start', async () => {
    const broker = await startTestBroker({
      config: { 'group.min.session.timeout.ms': 500, 'transaction.state.log.num.partitions': 3 },
    });
    const workers: WorkerProcess[] = [];
    onTestFinished(async () => {
      for (const w of workers) await w.process.stop();
      await broker.stop();
    });
    const args = [
      '-o',
      `bootstrap.servers=${broker.bootstrap}`,
      ...baseOverrides({
        'rest.extension.classes': BASIC_AUTH_EXTENSION,
        'scheduled.rebalance.max.delay.ms': '0',
        'offset.storage.partitions': '3',
        'exactly.once.source.support': 'enabled',
      }),
    ];
    // Kafka's way: the JAAS file as a JVM system property in KAFKA_OPTS.
    const env = { KAFKA_OPTS: `-Djava.security.auth.login.config=${authFiles()}` };
    workers.push(...(await Promise.all([0, 1].map(() => startWorker(args, { env })))));
    // The leader, once both workers applied the same generation (their logs say so).
    const leaderId = await waitFor(
      'both workers in one generation',
      () => {
        const latest = workers.map((w) => {
          const line = w.process
            .output()
            .filter((l) => l.includes('"msg":"assignment applied"'))
            .at(-1);
          return line === undefined
            ? undefined
            : (JSON.parse(line) as { generation: number; leader: string });
        });
        if (latest.some((a) => a === undefined) || latest[0]!.generation !== latest[1]!.generation)
          return undefined;
        return new URL(latest[0]!.leader).host;
      },
      30_000,
    );
    const follower = workers.find((w) => w.id !== leaderId)!;
    const leader = workers.find((w) => w.id === leaderId)!;
    expect(follower).not.toBe(leader);
    // One connector written through each worker: the follower forwards its write.
    for (const [name, w] of [
      ['gen0', follower],
      ['gen1', leader],
    ] as const) {
      const config = {
        'connector.class': 'DatagenConnector',
        topic: name,
        'tasks.max': '2',
        iterations: '100',
        'records.per.second': '200',
      };
      expect((await call(w.url, 'PUT', `/connectors/${name}/config`, {}, config)).status).toBe(401);
      // The wrong password is refused by the follower itself, before any forward.
      expect(
        (await call(w.url, 'PUT', `/connectors/${name}/config`, { authorization: WRONG }, config))
          .status,
      ).toBe(401);
      const created = await call(
        w.url,
        'PUT',
        `/connectors/${name}/config`,
        { authorization: ALICE },
        config,
      );
      expect(created.status, created.text).toBe(201);
      // Location names the worker asked, as Kafka Connect builds it after a forward.
      expect(created.headers.get('location')).toBe(`${w.url}/connectors/${name}`);
    }
    for (const name of ['gen0', 'gen1']) {
      await waitFor(
        `${name}'s two tasks running`,
        async () => {
          const s = await call(workers[1]!.url, 'GET', `/connectors/${name}/status`, {
            authorization: ALICE,
          });
          const tasks = s.status === 200 ? JSON.parse(s.text).tasks : [];
          return tasks.length === 2 && tasks.every((t: { state: string }) => t.state === 'RUNNING')
            ? true
            : undefined;
        },
        60_000,
      );
    }
    const list = await call(workers[0]!.url, 'GET', '/connectors', { authorization: ALICE });
    expect(JSON.parse(list.text).sort()).toEqual(['gen0', 'gen1']);
  });
});

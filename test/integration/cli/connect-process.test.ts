/**
 * The real `connect` command in a child process (bin/connect.js through tsx), as a
 * user or a container runs it: exit codes, messages on stderr, environment variables
 * from the real process environment, and the shutdown path under real signals.
 */
import { connect, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel } from 'kafkajs';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runConnect, useProcess } from '../../helpers/processes.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';

const shutdownChild = fileURLToPath(new URL('./fixtures/shutdown-child.ts', import.meta.url));

/** A `connect worker` with its embedded broker, on free ports; resolves with its REST URL once idle. */
async function idleWorker() {
  const child = useProcess(
    process.execPath,
    [
      'bin/connect.js',
      'worker',
      'config/worker.properties',
      '-o',
      'broker.port=0',
      '-o',
      `broker.data.dir=${useTmpDir()}`,
      '-o',
      'listeners=http://127.0.0.1:0',
    ],
    { env: { LOG_LEVEL: 'info' } },
  );
  const ready = await child.waitForLine(/^worker .* running .*REST API on (http:\/\/\S+)/);
  // Idle: joined its group (the embedded broker holds the first join a few seconds)
  // with nothing to run.
  await child.waitForLine('assignment applied');
  return { child, url: new URL(/REST API on (http:\/\/\S+)/.exec(ready)![1]!) };
}

/** What src/cli.ts and the shutdown path print when something outlives a shutdown. */
function expectCleanExit(output: string[]): void {
  const text = output.join('\n');
  expect(text).not.toContain('leaked handle');
  expect(text).not.toContain('shutdown did not finish');
  expect(text).toContain('"component":"embedded broker","msg":"stopped"');
}

describe('connect command (child process)', () => {
  it('exits 2 with one line per bad key naming the key, the value, the expectation and the variable it came from', async () => {
    const result = await runConnect(
      ['worker', 'config/worker.properties', '-o', 'offset.flush.interval.ms=0'],
      {
        env: { CONNECT_REST_PORT: 'http', CONNECT_BOOTSTRAP_SERVERS: 'kafka:9092' },
      },
    );
    expect(result.code).toBe(2);
    expect(result.output).toEqual([
      `error: Invalid value for configuration 'offset.flush.interval.ms' (value "0"): must be at least 1 (from -o)`,
      `error: Invalid value for configuration 'rest.port' (value "http"): expected a whole number (from environment variable CONNECT_REST_PORT)`,
    ]);
  });

  it('warns about unknown keys, runs a worker with its embedded broker, and exits 0 on SIGTERM', async () => {
    const child = useProcess(
      process.execPath,
      [
        'bin/connect.js',
        'worker',
        'config/worker.properties',
        '-o',
        'rest.prot=8084',
        '-o',
        'broker.port=0',
        '-o',
        `broker.data.dir=${useTmpDir()}`,
        '-o',
        'listeners=http://127.0.0.1:0',
      ],
      { env: { LOG_LEVEL: 'warn' } },
    );
    const ready = await child.waitForLine(/^worker .* running .*REST API on (http:\/\/\S+)/);
    expect(child.output()).toContain(
      "warning: The configuration 'rest.prot' (from -o) was supplied but isn't a known config; it is ignored.",
    );
    const url = /REST API on (http:\/\/\S+)/.exec(ready)![1]!;
    const root = (await (await fetch(url)).json()) as { version: string };
    expect(root.version).toBeTruthy();
    child.signal('SIGTERM');
    expect(await child.exited).toEqual({ code: 0, signal: null });
  });

  it('an idle worker stops on SIGINT and exits 0 by itself: nothing it started outlives its shutdown', async () => {
    const { child, url } = await idleWorker();
    expect(await (await fetch(new URL('/connectors', url))).json()).toEqual([]);
    child.signal('SIGINT');
    expect(await child.exited).toEqual({ code: 0, signal: null });
    expectCleanExit(child.output());
  });

  it('SIGINT is not held up by REST connections that have not sent a whole request (a browser preconnect, a stalled client)', async () => {
    const { child, url } = await idleWorker();
    const open = (first?: string) =>
      new Promise<Socket>((resolve, reject) => {
        const socket = connect(Number(url.port), url.hostname, () => {
          if (first !== undefined) socket.write(first);
          resolve(socket);
        });
        socket.on('error', reject);
      });
    const sockets = [await open(), await open('GET /connectors HTTP/1.1\r\nHost: x\r\n')];
    onTestFinished(() => {
      for (const s of sockets) s.destroy();
    });
    child.signal('SIGINT');
    expect(await child.exited).toEqual({ code: 0, signal: null });
    expectCleanExit(child.output());
  });

  it('broker --help lists the broker keys and the BROKER_ environment prefix', async () => {
    const result = await runConnect(['broker', '--help']);
    expect(result.code).toBe(0);
    const help = result.output.join('\n');
    expect(help).toContain('Usage: connect broker');
    expect(help).toContain('BROKER_BROKER_PORT=9093 -> broker.port');
    for (const key of [
      'broker.port',
      'broker.host',
      'broker.data.dir',
      'log.retention.ms',
      'auto.create.topics.enable',
    ]) {
      expect(help).toContain(`  ${key} (`);
    }
  });

  it('broker serves Kafka clients until SIGTERM, then exits 0', async () => {
    const child = useProcess(
      process.execPath,
      ['bin/connect.js', 'broker', '-o', 'broker.port=0', '-o', `broker.data.dir=${useTmpDir()}`],
      {
        env: { LOG_LEVEL: 'warn' },
      },
    );
    const line = await child.waitForLine(/^broker listening on /);
    const port = Number(/:(\d+) /.exec(line)![1]);
    const admin = new Kafka({ brokers: [`127.0.0.1:${port}`], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'cli-topic', numPartitions: 2 }] });
    expect(await admin.listTopics()).toContain('cli-topic');
    await admin.disconnect();
    child.signal('SIGTERM');
    expect(await child.exited).toEqual({ code: 0, signal: null });
  });

  it('on SIGTERM a process stops its components in reverse start order and exits 0', async () => {
    const child = useProcess(process.execPath, ['--import', 'tsx', shutdownChild], {
      env: { LOG_LEVEL: 'silent' },
    });
    await child.waitForLine('ready');
    child.signal('SIGTERM');
    expect(await child.exited).toEqual({ code: 0, signal: null });
    expect(child.output()).toEqual([
      'ready',
      'stopping task',
      'stopped task',
      'stopping worker',
      'stopped worker',
      'stopping broker',
      'stopped broker',
    ]);
  });

  it('a second signal during a hung shutdown forces exit with code 130', async () => {
    const child = useProcess(process.execPath, ['--import', 'tsx', shutdownChild], {
      env: { LOG_LEVEL: 'silent', HANG: '1' },
    });
    await child.waitForLine('ready');
    child.signal('SIGINT');
    await child.waitForLine('stopping task');
    child.signal('SIGINT');
    expect(await child.exited).toEqual({ code: 130, signal: null });
    expect(child.output()).not.toContain('stopping worker');
  });
});

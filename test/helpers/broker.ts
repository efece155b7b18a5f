/**
 * An embedded broker for tests, on a free port in a temp dir, torn down when the
 * test (or file) finishes, pass or fail.
 *
 * - `startTestBroker()` runs it in this process (call `stop()` yourself, e.g. in
 *   afterAll); `useBroker()` does the same for the current test only.
 * - `spawnBrokerProcess()` runs `node bin/connect.js broker -o broker.port=0 ...` as a
 *   child process and reads the port from its `broker listening on host:port` line,
 *   for crash tests (SIGKILL) and for end-to-end CLI checks. `useBrokerProcess()`
 *   stops it at the end of the current test.
 */
import { onTestFinished } from 'vitest';
import { type RunningBroker, startBroker } from '../../src/broker/broker.ts';
import { spawnConnect, type TestProcess } from './processes.ts';
import { createTmpDir } from './tmp-dir.ts';

export interface TestBroker {
  broker: RunningBroker;
  /** host:port for clients. */
  bootstrap: string;
  port: number;
  dataDir: string;
  /** Stops the broker (idempotent); removes the data dir unless it was given. */
  stop(): Promise<void>;
}

export interface TestBrokerOptions {
  /** Reuse a data dir (restart tests); it is then not removed on stop. */
  dataDir?: string;
  /** Broker keys (log.*, num.partitions, ...), over the defaults. */
  config?: Record<string, unknown>;
  /** Port advertised in Metadata, when clients reach the broker through a proxy. */
  advertisedPort?: number;
}

export async function startTestBroker(options: TestBrokerOptions = {}): Promise<TestBroker> {
  const tmp = options.dataDir === undefined ? createTmpDir('broker-test-') : undefined;
  const dataDir = options.dataDir ?? tmp!.path;
  let broker: RunningBroker;
  try {
    broker = await startBroker({
      host: '127.0.0.1',
      port: 0,
      dataDir,
      nodeId: 1,
      advertisedPort: options.advertisedPort,
      // Fewer __consumer_offsets partitions than Kafka's 50 keep start-up quick; no
      // first-rebalance delay, so a test's consumer group forms at once.
      config: {
        'log.cleaner.backoff.ms': 1000,
        'offsets.topic.num.partitions': 4,
        'group.initial.rebalance.delay.ms': 0,
        ...options.config,
      },
    });
  } catch (e) {
    tmp?.remove();
    throw e;
  }
  let stopped: Promise<void> | undefined;
  return {
    broker,
    bootstrap: `127.0.0.1:${broker.port}`,
    port: broker.port,
    dataDir,
    stop: () => {
      stopped ??= broker.stop().finally(() => tmp?.remove());
      return stopped;
    },
  };
}

/** An in-process broker for the current test. */
export async function useBroker(options: TestBrokerOptions = {}): Promise<TestBroker> {
  const b = await startTestBroker(options);
  onTestFinished(() => b.stop());
  return b;
}

export interface BrokerProcess {
  process: TestProcess;
  bootstrap: string;
  port: number;
}

/** `connect broker` as a child process with its data in `dataDir`; `overrides` are -o key=value. */
export async function spawnBrokerProcess(
  dataDir: string,
  overrides: Record<string, string | number | boolean> = {},
): Promise<BrokerProcess> {
  const args = ['broker', '-o', 'broker.port=0', '-o', `broker.data.dir=${dataDir}`];
  for (const [k, v] of Object.entries(overrides)) args.push('-o', `${k}=${v}`);
  const process = spawnConnect(args, { killGraceMs: 10_000 });
  try {
    const line = await process.waitForLine(/broker listening on [^:\s]+:\d+/);
    const port = Number(/broker listening on [^:\s]+:(\d+)/.exec(line)![1]);
    return { process, bootstrap: `127.0.0.1:${port}`, port };
  } catch (e) {
    await process.stop();
    throw e;
  }
}

/** A broker child process for the current test, stopped at its end. */
export async function useBrokerProcess(
  dataDir: string,
  overrides: Record<string, string | number | boolean> = {},
): Promise<BrokerProcess> {
  const b = await spawnBrokerProcess(dataDir, overrides);
  onTestFinished(async () => {
    await b.process.stop();
  });
  return b;
}

/**
 * Helpers for distributed-mode tests: `connect worker` child processes (the first one
 * may run the embedded broker, the others point bootstrap.servers at it), the REST API
 * of each, and reading what a worker printed when it became ready.
 */
import { join } from 'node:path';
import { spawnConnect, type TestProcess } from '../../helpers/processes.ts';
import { rest as restCall } from '../../helpers/rest-client.ts';
import { testPluginPath } from '../standalone/standalone-helpers.ts';

export { waitFor } from '../../helpers/wait.ts';
export { fileLines } from '../standalone/standalone-helpers.ts';

export interface WorkerProcess {
  process: TestProcess;
  /** REST base URL, e.g. http://127.0.0.1:41234 */
  url: string;
  /** `host:port`, the worker_id in statuses. */
  id: string;
  /** The embedded broker's bootstrap address, when this worker runs it. */
  bootstrap?: string;
}

/** Keys every test worker shares: fast membership, short waits, plain strings. */
export function baseOverrides(extra: Record<string, string> = {}): string[] {
  return Object.entries({
    listeners: 'http://127.0.0.1:0',
    'plugin.path': testPluginPath,
    'offset.flush.interval.ms': '200',
    'key.converter': 'org.apache.kafka.connect.storage.StringConverter',
    'value.converter': 'org.apache.kafka.connect.storage.StringConverter',
    'session.timeout.ms': '3000',
    'heartbeat.interval.ms': '300',
    // Sink tasks' own consumer groups must notice a killed worker quickly too
    // (kafkajs's default session is 30 s, longer than the tests wait).
    'consumer.session.timeout.ms': '3000',
    'consumer.heartbeat.interval.ms': '300',
    'rebalance.timeout.ms': '10000',
    'task.shutdown.graceful.timeout.ms': '5000',
    ...extra,
  }).flatMap(([k, v]) => ['-o', `${k}=${v}`]);
}

/** Broker keys for the worker that embeds the broker (data under `dir`). */
export function embeddedBrokerOverrides(dir: string): string[] {
  return Object.entries({
    'bootstrap.servers': '',
    'broker.host': '127.0.0.1',
    'broker.port': '0',
    'broker.data.dir': join(dir, 'broker'),
    'offsets.topic.num.partitions': '4',
    'group.initial.rebalance.delay.ms': '0',
    // Lets the tests use a 3 s session timeout (Kafka's broker minimum is 6 s).
    'group.min.session.timeout.ms': '500',
  }).flatMap(([k, v]) => ['-o', `${k}=${v}`]);
}

/** Start `connect worker` with these arguments and wait until it says it is running. */
export async function startWorker(
  args: string[],
  options: { killGraceMs?: number; env?: Record<string, string> } = {},
): Promise<WorkerProcess> {
  const process = spawnConnect(['worker', ...args], {
    env: { LOG_LEVEL: 'info', ...options.env },
    killGraceMs: options.killGraceMs ?? 15_000,
  });
  const ready = await process.waitForLine(/^worker \S+ running .*REST API on /, 60_000);
  const url = /REST API on (\S+)/.exec(ready)![1]!;
  const id = /^worker (\S+) running/.exec(ready)![1]!;
  const brokerLine = process.output().find((l) => l.startsWith('broker listening on '));
  const bootstrap = brokerLine ? /^broker listening on (\S+)/.exec(brokerLine)![1] : undefined;
  return { process, url, id, ...(bootstrap ? { bootstrap } : {}) };
}

/** The REST API of a worker process. */
export function rest(worker: { url: string }, method: string, path: string, body?: unknown) {
  return restCall({ restUrl: worker.url }, method, path, body);
}

export function lines(from: number, to: number): string[] {
  return Array.from({ length: to - from + 1 }, (_, i) => `line ${from + i}`);
}

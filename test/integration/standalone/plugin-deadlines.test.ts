/**
 * One plugin never stops the worker (DESIGN.md): connector and task starts and stops
 * that do not return (fixtures/stuck-plugins) leave REST answering, end FAILED at
 * their deadline with a trace saying so, and never block a delete, a restart or the
 * worker's shutdown. The worker runs on ManualTimers, so deadlines pass when a test
 * moves time, never by sleeping; the only timing a test checks is that an answer comes
 * at all before a generous limit.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import {
  type StandaloneWorker,
  startStandaloneWorker,
} from '../../../src/connect/runtime/standalone-worker.ts';
import { ManualTimers } from '../../../src/util/timers.ts';
import { startTestBroker, type TestBroker } from '../../helpers/broker.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import { waitFor, workerConfig } from './standalone-helpers.ts';

/** A herder that hangs never answers; one that works answers in milliseconds. */
const ANSWER_LIMIT_MS = 5000;
/** The worker's deadlines in these tests (the defaults of worker-config.ts). */
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 5000;

const stuckPlugins = fileURLToPath(new URL('./fixtures/stuck-plugins', import.meta.url));

let broker: TestBroker;

beforeAll(async () => {
  broker = await startTestBroker();
});

afterAll(async () => {
  await broker?.stop();
});

interface Running {
  worker: StandaloneWorker;
  timers: ManualTimers;
  dir: string;
}

async function useStuckWorker(): Promise<Running> {
  const dir = useTmpDir();
  const timers = new ManualTimers();
  const config = workerConfig(broker.bootstrap, dir, {
    'plugin.path': stuckPlugins,
    'task.start.timeout.ms': String(START_TIMEOUT_MS),
    'connector.start.timeout.ms': String(START_TIMEOUT_MS),
    'task.shutdown.graceful.timeout.ms': String(STOP_TIMEOUT_MS),
  });
  const worker = await startStandaloneWorker({ config, timers });
  // Bounded, so a worker that cannot stop fails its test rather than hang the file.
  onTestFinished(() => settles(worker.stop(), timers).catch(() => undefined));
  return { worker, timers, dir };
}

/**
 * `work`'s result once it settles, moving the worker's time on meanwhile (a deadline
 * is scheduled only once the code gets to it); fails after ANSWER_LIMIT_MS.
 */
async function settles<T>(work: Promise<T>, timers?: ManualTimers, stepMs = STOP_TIMEOUT_MS) {
  let settled = false;
  const tracked = work.finally(() => {
    settled = true;
  });
  tracked.catch(() => undefined);
  const limit = Date.now() + ANSWER_LIMIT_MS;
  while (!settled) {
    if (Date.now() > limit) throw new Error(`did not settle within ${ANSWER_LIMIT_MS} ms`);
    timers?.advance(stepMs);
    await new Promise((r) => setTimeout(r, 20));
  }
  return tracked;
}

/** A REST call that must answer before ANSWER_LIMIT_MS; `timers` moves time meanwhile. */
async function answer(
  running: Running,
  method: string,
  path: string,
  body?: unknown,
  options: { timers?: ManualTimers } = {},
  // biome-ignore lint/suspicious/noExplicitAny: REST bodies are checked field by field
): Promise<{ status: number; body: any }> {
  const call = (async () => {
    const response = await fetch(`${running.worker.restUrl}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(ANSWER_LIMIT_MS + 1000),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? null : JSON.parse(text) };
  })();
  try {
    return await settles(call, options.timers);
  } catch (e) {
    throw new Error(`${method} ${path} did not answer: ${(e as Error).message}`);
  }
}

const taskStatus = async (running: Running, name: string) =>
  (await answer(running, 'GET', `/connectors/${name}/tasks/0/status`)).body;

/** Its task is configured, hence started: its start deadline is running. */
const taskStarted = (running: Running, name: string) =>
  waitFor(`a task of ${name}`, async () =>
    (await answer(running, 'GET', `/connectors/${name}/tasks`)).body.length > 0 ? true : undefined,
  );

function events(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

describe('plugin deadlines', () => {
  it('a task whose start never returns is FAILED at task.start.timeout.ms while REST answers, and its connector is deleted', async () => {
    const running = await useStuckWorker();
    const created = await answer(running, 'POST', '/connectors', {
      name: 'stuck-sink',
      // The user's case: a sink whose store's mkdir never returns.
      config: {
        'connector.class': 'test.StuckSink',
        topics: 'stuck-in',
        'store.url': 'file:///proc/nope',
        hang: 'task.start',
      },
    });
    expect(created.status).toBe(201);
    expect((await answer(running, 'GET', '/connectors')).body).toEqual(['stuck-sink']);
    const other = await answer(running, 'POST', '/connectors', {
      name: 'other',
      config: { 'connector.class': 'test.StuckSource' },
    });
    expect(other.status).toBe(201);
    await waitFor('the other task to run', async () =>
      (await taskStatus(running, 'other')).state === 'RUNNING' ? true : undefined,
    );
    await taskStarted(running, 'stuck-sink');
    expect((await taskStatus(running, 'stuck-sink')).state).toBe('UNASSIGNED');

    running.timers.advance(START_TIMEOUT_MS);
    const failed = await waitFor('the stuck task to fail', async () => {
      const s = await taskStatus(running, 'stuck-sink');
      return s.state === 'FAILED' ? s : undefined;
    });
    expect(failed.trace).toContain(`Task stuck-sink-0 did not start within ${START_TIMEOUT_MS} ms`);
    expect((await taskStatus(running, 'other')).state).toBe('RUNNING');

    expect((await answer(running, 'DELETE', '/connectors/stuck-sink')).status).toBe(204);
    expect((await answer(running, 'GET', '/connectors')).body).toEqual(['other']);
    await settles(running.worker.stop());
  });

  it('a connector whose start never returns holds up no other request, is deleted or stopped while starting, and is FAILED at connector.start.timeout.ms', async () => {
    const running = await useStuckWorker();
    const stuck = { 'connector.class': 'test.StuckSource', hang: 'connector.start' };
    const created = await answer(running, 'POST', '/connectors', { name: 'stuck', config: stuck });
    expect(created.status).toBe(201);
    const other = await answer(running, 'POST', '/connectors', {
      name: 'other',
      config: { 'connector.class': 'test.StuckSource' },
    });
    expect(other.status).toBe(201);
    expect((await answer(running, 'DELETE', '/connectors/stuck')).status).toBe(204);
    expect((await answer(running, 'GET', '/connectors')).body).toEqual(['other']);

    await answer(running, 'POST', '/connectors', { name: 'halted', config: stuck });
    expect((await answer(running, 'PUT', '/connectors/halted/stop')).status).toBe(204);
    expect((await answer(running, 'GET', '/connectors/halted/status')).body.connector.state).toBe(
      'STOPPED',
    );

    await answer(running, 'POST', '/connectors', { name: 'failing', config: stuck });
    running.timers.advance(START_TIMEOUT_MS);
    const status = await waitFor('the stuck connector to fail', async () => {
      const s = (await answer(running, 'GET', '/connectors/failing/status')).body;
      return s.connector.state === 'FAILED' ? s : undefined;
    });
    expect(status.connector.trace).toContain(
      `Connector failing did not start within ${START_TIMEOUT_MS} ms`,
    );
    expect((await answer(running, 'DELETE', '/connectors/failing')).status).toBe(204);
    expect((await taskStatus(running, 'other')).state).toBe('RUNNING');
    await settles(running.worker.stop());
  });

  it('a task start that returns after its deadline stops that abandoned instance and changes no state; a restart made a fresh one', async () => {
    const running = await useStuckWorker();
    const eventsFile = join(running.dir, 'events');
    const release = join(running.dir, 'release');
    await answer(running, 'POST', '/connectors', {
      name: 'late',
      config: {
        'connector.class': 'test.StuckSource',
        hang: 'task.start',
        'hang.task.starts': '1',
        'release.file': release,
        'events.file': eventsFile,
      },
    });
    await taskStarted(running, 'late');
    running.timers.advance(START_TIMEOUT_MS);
    await waitFor('the late task to fail', async () =>
      (await taskStatus(running, 'late')).state === 'FAILED' ? true : undefined,
    );
    expect((await answer(running, 'POST', '/connectors/late/tasks/0/restart')).status).toBe(204);
    await waitFor('the fresh instance to run', async () =>
      (await taskStatus(running, 'late')).state === 'RUNNING' ? true : undefined,
    );

    writeFileSync(release, '');
    await waitFor('the abandoned instance to be stopped', () =>
      events(eventsFile).includes('task.stop 1') ? true : undefined,
    );
    const status = await taskStatus(running, 'late');
    expect(status.state).toBe('RUNNING');
    expect(status.trace).toBeUndefined();
    expect(events(eventsFile).filter((e) => e.startsWith('task.'))).toEqual([
      'task.start 1',
      'task.start 2',
      'task.started 2',
      'task.started 1',
      'task.stop 1',
    ]);
    await settles(running.worker.stop());
  });

  it('a connector and a task whose stop never returns: the delete and the shutdown end at task.shutdown.graceful.timeout.ms', async () => {
    const running = await useStuckWorker();
    const sticky = (name: string) => ({
      name,
      config: { 'connector.class': 'test.StuckSource', hang: 'connector.stop,task.stop' },
    });
    await answer(running, 'POST', '/connectors', sticky('sticky'));
    await answer(running, 'POST', '/connectors', sticky('sticky-too'));
    await waitFor('both tasks to run', async () =>
      (await taskStatus(running, 'sticky')).state === 'RUNNING' &&
      (await taskStatus(running, 'sticky-too')).state === 'RUNNING'
        ? true
        : undefined,
    );
    const deleted = await answer(running, 'DELETE', '/connectors/sticky', undefined, {
      timers: running.timers,
    });
    expect(deleted.status).toBe(204);
    expect((await answer(running, 'GET', '/connectors')).body).toEqual(['sticky-too']);
    await settles(running.worker.stop(), running.timers);
  });
});

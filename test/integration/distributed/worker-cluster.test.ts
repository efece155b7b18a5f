/**
 * Three `connect worker` processes on one embedded broker (issue 6): the first runs
 * the broker, the others point bootstrap.servers at it. Six tasks (a datagen source
 * with four, a file source and a file sink) spread two per worker; a worker stopped
 * cleanly has its tasks run elsewhere; a worker killed with SIGKILL has its tasks run
 * elsewhere once scheduled.rebalance.max.delay.ms has passed; a worker that comes back
 * gets its share again. Every worker answers REST, a config written on a follower is
 * applied, statuses name the worker running each task, and the file pipeline loses no
 * line through all of it (a SIGKILL may repeat some: at-least-once).
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import {
  baseOverrides,
  embeddedBrokerOverrides,
  fileLines,
  lines,
  rest,
  startWorker,
  type WorkerProcess,
  waitFor,
} from './distributed-helpers.ts';

interface TaskRow {
  connector: string;
  id: number;
  state: string;
  worker_id: string;
}

const CONNECTORS = ['gen', 'src', 'sink'];

/** Every task of the test's connectors, as one worker's REST API reports them. */
async function allTasks(worker: WorkerProcess): Promise<TaskRow[]> {
  const rows: TaskRow[] = [];
  for (const name of CONNECTORS) {
    const s = await rest(worker, 'GET', `/connectors/${name}/status`);
    if (s.status !== 200) return [];
    for (const t of s.body.tasks) rows.push({ connector: name, ...t });
  }
  return rows;
}

/** Waits until all six tasks run, on the given workers only; answers tasks per worker. */
function untilRunningOn(via: WorkerProcess, workers: WorkerProcess[], what: string) {
  const ids = workers.map((w) => w.id);
  return waitFor(
    what,
    async () => {
      const tasks = await allTasks(via);
      if (tasks.length !== 6) return undefined;
      if (!tasks.every((t) => t.state === 'RUNNING' && ids.includes(t.worker_id))) return undefined;
      return ids.map((id) => tasks.filter((t) => t.worker_id === id).length);
    },
    60_000,
  );
}

function untilBalanced(via: WorkerProcess, workers: WorkerProcess[], what: string) {
  return waitFor(
    what,
    async () => {
      const counts = await untilRunningOn(via, workers, what).catch(() => undefined);
      return counts?.every((c) => c === 2) ? counts : undefined;
    },
    60_000,
  );
}

describe('a cluster of three connect workers', () => {
  it('spreads tasks, moves them on clean stops and crashes, and rebalances on return', async () => {
    const dir = useTmpDir();
    const input = join(dir, 'input.txt');
    const output = join(dir, 'output.txt');
    writeFileSync(input, `${lines(1, 10).join('\n')}\n`);
    // Short delay so the SIGKILL case is quick; Kafka's default is 300 s.
    const common = baseOverrides({ 'scheduled.rebalance.max.delay.ms': '4000' });
    const workers: WorkerProcess[] = [];
    onTestFinished(async () => {
      // Followers first, the broker's worker last.
      for (const w of [...workers].reverse()) await w.process.stop();
    });
    const w1 = await startWorker([...embeddedBrokerOverrides(dir), ...common]);
    workers.push(w1);
    const joined = ['-o', `bootstrap.servers=${w1.bootstrap}`, ...common];
    let w2 = await startWorker(joined);
    workers.push(w2);
    let w3 = await startWorker(joined);
    workers.push(w3);

    // Created through the followers: forwarded to the leader.
    const gen = {
      'connector.class': 'DatagenConnector',
      'tasks.max': '4',
      topic: 'gen',
      'records.per.second': '5',
    };
    for (const [worker, name, config] of [
      [w3, 'gen', gen],
      [w2, 'src', { 'connector.class': 'FileStreamSource', file: input, topic: 'lines' }],
      [w3, 'sink', { 'connector.class': 'FileStreamSink', file: output, topics: 'lines' }],
    ] as const) {
      const created = await rest(worker, 'POST', '/connectors', { name, config });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
    }
    expect(await untilBalanced(w1, [w1, w2, w3], 'six tasks, two per worker')).toEqual([2, 2, 2]);
    for (const w of [w1, w2, w3]) {
      expect((await rest(w, 'GET', '/connectors')).body.sort()).toEqual(['gen', 'sink', 'src']);
    }

    // A config written on a follower is applied cluster-wide.
    const updated = await rest(w2, 'PUT', '/connectors/gen/config', {
      ...gen,
      'records.per.second': '7',
    });
    expect(updated.status).toBe(200);
    await waitFor('the new config everywhere', async () => {
      for (const w of [w1, w2, w3]) {
        const tasks = (await rest(w, 'GET', '/connectors/gen/tasks')).body;
        if (
          !tasks.every(
            (t: { config: Record<string, string> }) => t.config['records.per.second'] === '7',
          )
        )
          return undefined;
      }
      return true;
    });

    // Clean stop: its tasks move without waiting for the delay.
    appendFileSync(input, `${lines(11, 20).join('\n')}\n`);
    expect((await w3.process.stop()).code).toBe(0);
    let started = Date.now();
    const afterLeave = await untilRunningOn(w1, [w1, w2], 'tasks moved after a clean stop');
    expect(afterLeave).toEqual([3, 3]);
    console.log(`clean stop: tasks running elsewhere after ${Date.now() - started} ms`);

    w3 = await startWorker(joined);
    workers.push(w3);
    expect(await untilBalanced(w1, [w1, w2, w3], 'balance after the return')).toEqual([2, 2, 2]);

    // SIGKILL: its tasks move after the session timeout and the scheduled delay.
    appendFileSync(input, `${lines(21, 30).join('\n')}\n`);
    w2.process.signal('SIGKILL');
    await w2.process.exited;
    started = Date.now();
    expect(await untilRunningOn(w1, [w1, w3], 'tasks moved after a crash')).toEqual([3, 3]);
    console.log(`SIGKILL: tasks running elsewhere after ${Date.now() - started} ms`);

    w2 = await startWorker(joined);
    workers.push(w2);
    expect(await untilBalanced(w3, [w1, w2, w3], 'balance after the crash')).toEqual([2, 2, 2]);

    // Every worker answers the same status; no line was lost.
    const statuses = await Promise.all(
      [w1, w2, w3].map(async (w) => (await rest(w, 'GET', '/connectors/src/status')).body),
    );
    expect(statuses[1]).toEqual(statuses[0]);
    expect(statuses[2]).toEqual(statuses[0]);
    appendFileSync(input, `${lines(31, 40).join('\n')}\n`);
    await waitFor(
      'every line in the output',
      () => (new Set(fileLines(output)).size === 40 ? true : undefined),
      30_000,
    );
    expect([...new Set(fileLines(output))].sort()).toEqual(lines(1, 40).sort());
  }, 150_000);
});

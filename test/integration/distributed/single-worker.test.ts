/**
 * `connect worker` as a user runs it, alone (issue 5's distributed half): one child
 * process with the embedded broker; connectors created, paused, resumed, stopped,
 * restarted, their offsets altered and deleted over REST; everything a restarted
 * worker needs is read back from the internal topics, and the file pair copies every
 * line exactly once across a clean restart.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, statSync, writeFileSync } from 'node:fs';
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
  waitFor,
} from './distributed-helpers.ts';

/** Every value in the topic, read with kcat from the beginning. */
function topicValues(bootstrap: string, topic: string): string[] {
  const out = execFileSync(
    'kcat',
    ['-b', bootstrap, '-C', '-t', topic, '-o', 'beginning', '-e', '-q', '-f', '%s\\n'],
    { encoding: 'utf8', timeout: 20_000 },
  );
  return out.split('\n').filter((l) => l !== '');
}

async function statusOf(worker: { url: string }, name: string) {
  const s = await rest(worker, 'GET', `/connectors/${name}/status`);
  return s.status === 200 ? s.body : undefined;
}

/** Waits until the connector and all of its `tasks` tasks are in `state`. */
function untilState(worker: { url: string }, name: string, state: string, tasks: number) {
  return waitFor(`${name} ${state} with ${tasks} task(s)`, async () => {
    const s = await statusOf(worker, name);
    return s?.connector.state === state &&
      s.tasks.length === tasks &&
      s.tasks.every((t: { state: string }) => t.state === state)
      ? s
      : undefined;
  });
}

/** The source's offsets once they cover the whole input file (committed every flush interval). */
function committedToEnd(worker: { url: string }, input: string) {
  const end = statSync(input).size;
  return waitFor('the offset of the last line', async () => {
    const body = (await rest(worker, 'GET', '/connectors/src/offsets')).body;
    return body.offsets[0]?.offset.position === end ? body : undefined;
  });
}

describe('connect worker (one process, embedded broker)', () => {
  it('runs a file pipeline over REST and restores it from the internal topics after a restart', async () => {
    const dir = useTmpDir();
    const input = join(dir, 'input.txt');
    const output = join(dir, 'output.txt');
    writeFileSync(input, `${lines(1, 20).join('\n')}\n`);
    const args = [...embeddedBrokerOverrides(dir), ...baseOverrides()];
    let worker = await startWorker(args);
    onTestFinished(() => worker.process.stop().then(() => {}));
    const bootstrap = worker.bootstrap!;
    // KIP-1017: healthy once the worker has joined its group (the loop answers).
    const health = await waitFor('the worker to report healthy', async () => {
      const h = await rest(worker, 'GET', '/health');
      return h.status === 200 ? h.body : undefined;
    });
    expect(health).toEqual({
      status: 'healthy',
      message: 'Worker has completed startup and is ready to handle requests.',
    });

    // Invalid config: 400 with per-field messages, nothing created.
    const invalid = await rest(worker, 'POST', '/connectors', {
      name: 'bad',
      config: { 'connector.class': 'FileStreamSource', 'tasks.max': 'many', file: input },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error_code).toBe(400);
    expect(invalid.body.message).toMatch(/tasks\.max/);
    expect((await rest(worker, 'GET', '/connectors')).body).toEqual([]);

    const source = { 'connector.class': 'FileStreamSource', file: input, topic: 'lines' };
    const sink = { 'connector.class': 'FileStreamSink', file: output, topics: 'lines' };
    const created = await rest(worker, 'POST', '/connectors', { name: 'src', config: source });
    expect(created.status).toBe(201);
    expect((await rest(worker, 'POST', '/connectors', { name: 'sink', config: sink })).status).toBe(
      201,
    );
    const running = await untilState(worker, 'src', 'RUNNING', 1);
    expect(running.connector.worker_id).toBe(worker.id);
    expect(running.tasks[0].worker_id).toBe(worker.id);
    await untilState(worker, 'sink', 'RUNNING', 1);
    await waitFor('20 lines copied', () => (fileLines(output).length >= 20 ? true : undefined));
    expect(topicValues(bootstrap, 'lines')).toEqual(lines(1, 20));
    expect(fileLines(output)).toEqual(lines(1, 20));
    expect((await rest(worker, 'GET', '/connectors/src/topics')).body).toEqual({
      src: { topics: ['lines'] },
    });

    // Pause and resume.
    expect((await rest(worker, 'PUT', '/connectors/src/pause')).status).toBe(202);
    await untilState(worker, 'src', 'PAUSED', 1);
    expect((await rest(worker, 'PUT', '/connectors/src/resume')).status).toBe(202);
    await untilState(worker, 'src', 'RUNNING', 1);
    appendFileSync(input, `${lines(21, 30).join('\n')}\n`);
    await waitFor('30 lines copied', () => (fileLines(output).length >= 30 ? true : undefined));

    // Offsets change only while STOPPED. (Waiting for the last line's offset first:
    // writing back an older position would make the source read lines again.)
    const offsets = { body: await committedToEnd(worker, input) };
    expect(offsets.body.offsets).toHaveLength(1);
    const refused = await rest(worker, 'PATCH', '/connectors/src/offsets', offsets.body);
    expect(refused.status).toBe(400);
    expect((await rest(worker, 'PUT', '/connectors/src/stop')).status).toBe(204);
    await untilState(worker, 'src', 'STOPPED', 0);
    expect((await rest(worker, 'GET', '/connectors/src/tasks')).body).toEqual([]);
    const altered = await rest(worker, 'PATCH', '/connectors/src/offsets', offsets.body);
    expect(altered.status).toBe(200);
    expect(altered.body.message).toMatch(/altered successfully/);
    expect((await rest(worker, 'GET', '/connectors/src/offsets')).body).toEqual(offsets.body);
    expect((await rest(worker, 'PUT', '/connectors/src/resume')).status).toBe(202);
    await untilState(worker, 'src', 'RUNNING', 1);

    // Restart the sink with its tasks.
    const restart = await rest(worker, 'POST', '/connectors/sink/restart?includeTasks=true');
    expect(restart.status).toBe(202);
    expect(restart.body.tasks[0].state).toBe('RESTARTING');
    await untilState(worker, 'sink', 'RUNNING', 1);

    appendFileSync(input, `${lines(31, 40).join('\n')}\n`);
    await waitFor('40 lines copied', () => (fileLines(output).length >= 40 ? true : undefined));
    const taskConfigsBefore = (await rest(worker, 'GET', '/connectors/src/tasks')).body;
    const offsetsBefore = await committedToEnd(worker, input);

    // A clean restart of the process: everything comes back from the internal topics.
    expect((await worker.process.stop()).code).toBe(0);
    worker = await startWorker(args);
    expect((await rest(worker, 'GET', '/connectors')).body.sort()).toEqual(['sink', 'src']);
    expect((await rest(worker, 'GET', '/connectors/src/tasks')).body).toEqual(taskConfigsBefore);
    expect((await rest(worker, 'GET', '/connectors/src/offsets')).body).toEqual(offsetsBefore);
    await untilState(worker, 'src', 'RUNNING', 1);
    await untilState(worker, 'sink', 'RUNNING', 1);
    appendFileSync(input, `${lines(41, 50).join('\n')}\n`);
    await waitFor('50 lines copied', () => (fileLines(output).length >= 50 ? true : undefined));
    expect(fileLines(output)).toEqual(lines(1, 50));
    // The broker came back on another free port, with its data.
    expect(topicValues(worker.bootstrap!, 'lines')).toEqual(lines(1, 50));

    // Delete.
    expect((await rest(worker, 'DELETE', '/connectors/sink')).status).toBe(204);
    expect((await rest(worker, 'GET', '/connectors/sink')).status).toBe(404);
    expect((await rest(worker, 'GET', '/connectors')).body).toEqual(['src']);
  }, 120_000);
});

/**
 * What a task tells the runtime through its context besides records, as a user of a
 * standalone worker sees it (REST status, topics on the broker), with the test plugins
 * of fixtures/context-plugins:
 *   - reportTrouble: the detail is the `trace` of the task's RUNNING status, cleared by
 *     null, kept across a pause;
 *   - topicCreationOverride: topic configs over the connector's topic.creation.* ones
 *     when the runtime creates the topic;
 *   - bootstrapServers: the worker's bootstrap.servers, for a task's own topic reader.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { TaskState } from '../../../src/connect/herder/herder.ts';
import { startTestBroker, type TestBroker } from '../../helpers/broker.ts';
import { readRecords } from '../../helpers/read-records.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import { rest, useStandalone, waitFor, workerConfig } from './standalone-helpers.ts';

const contextPlugins = fileURLToPath(new URL('./fixtures/context-plugins', import.meta.url));

/** kafkajs's ConfigResourceTypes.TOPIC. */
const TOPIC_RESOURCE = 2;

let broker: TestBroker;
let kafka: Kafka;

beforeAll(async () => {
  broker = await startTestBroker();
  kafka = new Kafka({ brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
});

afterAll(async () => {
  await broker?.stop();
});

async function useWorker(dir: string) {
  return useStandalone(workerConfig(broker.bootstrap, dir, { 'plugin.path': contextPlugins }));
}

type Worker = Awaited<ReturnType<typeof useWorker>>;

/** The task's entry of GET /connectors/{name}/status once `accept` holds for it. */
function taskStatus(
  worker: Worker,
  name: string,
  what: string,
  accept: (task: TaskState) => boolean,
): Promise<TaskState> {
  return waitFor(what, async () => {
    const { body } = await rest(worker, 'GET', `/connectors/${name}/status`);
    const task: TaskState | undefined = body?.tasks?.[0];
    return task !== undefined && accept(task) ? task : undefined;
  });
}

describe('reportTrouble', () => {
  for (const [kind, config] of [
    ['source', { 'connector.class': 'test.TroubledSource' }],
    ['sink', { 'connector.class': 'test.TroubledSink', topics: 'troubled-in' }],
  ] as const) {
    it(`shows a ${kind} task's detail as the trace of its RUNNING status, and no trace once cleared`, async () => {
      const dir = useTmpDir();
      const troubleFile = join(dir, 'trouble.txt');
      const worker = await useWorker(dir);
      const name = `troubled-${kind}`;
      writeFileSync(troubleFile, 'waiting for X');
      await rest(worker, 'PUT', `/connectors/${name}/config`, {
        ...config,
        'trouble.file': troubleFile,
      });

      const troubled = await taskStatus(worker, name, 'the trace', (t) => t.trace !== undefined);
      rmSync(troubleFile);
      const cleared = await taskStatus(worker, name, 'no trace', (t) => t.trace === undefined);

      expect(troubled).toEqual({
        id: 0,
        state: 'RUNNING',
        trace: 'waiting for X',
        worker_id: worker.worker.workerId,
      });
      expect(cleared).toEqual({ id: 0, state: 'RUNNING', worker_id: worker.worker.workerId });
      const task = (await rest(worker, 'GET', `/connectors/${name}/tasks/0/status`)).body;
      expect(task).toEqual(cleared);
    });
  }

  it('keeps the detail of a paused task for its resume, and shows PAUSED without it', async () => {
    const dir = useTmpDir();
    const troubleFile = join(dir, 'trouble.txt');
    const worker = await useWorker(dir);
    writeFileSync(troubleFile, 'waiting for X');
    await rest(worker, 'PUT', '/connectors/paused/config', {
      'connector.class': 'test.TroubledSource',
      'trouble.file': troubleFile,
    });
    await taskStatus(worker, 'paused', 'the trace', (t) => t.trace === 'waiting for X');

    await rest(worker, 'PUT', '/connectors/paused/pause');
    const paused = await taskStatus(worker, 'paused', 'PAUSED', (t) => t.state === 'PAUSED');
    await rest(worker, 'PUT', '/connectors/paused/resume');
    const resumed = await taskStatus(worker, 'paused', 'RUNNING', (t) => t.state === 'RUNNING');

    expect(paused.trace).toBeUndefined();
    expect(resumed.trace).toBe('waiting for X');
  });
});

describe('topicCreationOverride', () => {
  it("creates the overridden topic with the task's cleanup.policy=delete, so records without a key are accepted, and the other topic compacted", async () => {
    const dir = useTmpDir();
    const worker = await useWorker(dir);
    await rest(worker, 'PUT', '/connectors/keyless/config', {
      'connector.class': 'test.KeylessSource',
      'keyed.topic': 'override-keyed',
      'keyless.topic': 'override-keyless',
    });

    const [keyless] = await readRecords(broker.bootstrap, 'override-keyless', 1);
    const [keyed] = await readRecords(broker.bootstrap, 'override-keyed', 1);

    expect(keyless?.value).toBe('without a key');
    expect(keyed?.value).toBe('with a key');
    expect(await cleanupPolicies(['override-keyless', 'override-keyed'])).toEqual({
      'override-keyless': 'delete',
      'override-keyed': 'compact',
    });
    const status = (await rest(worker, 'GET', '/connectors/keyless/status')).body;
    expect(status.tasks[0].state).toBe('RUNNING');
  });

  it('without the override the topic is compacted and refuses the record without a key (the task fails)', async () => {
    const dir = useTmpDir();
    const worker = await useWorker(dir);
    await rest(worker, 'PUT', '/connectors/keyless-plain/config', {
      'connector.class': 'test.KeylessSource',
      'keyed.topic': 'plain-keyed',
      'keyless.topic': 'plain-keyless',
      override: 'false',
    });

    const failed = await taskStatus(worker, 'keyless-plain', 'FAILED', (t) => t.state === 'FAILED');

    expect(failed.trace).toMatch(/without key/);
    expect(await cleanupPolicies(['plain-keyless'])).toEqual({ 'plain-keyless': 'compact' });
  });
});

describe('bootstrapServers', () => {
  it("shows a source task the worker's bootstrap.servers", async () => {
    const dir = useTmpDir();
    const worker = await useWorker(dir);
    await rest(worker, 'PUT', '/connectors/bootstrap/config', {
      'connector.class': 'test.BootstrapSource',
      topic: 'bootstrap-seen',
    });

    const [record] = await readRecords(broker.bootstrap, 'bootstrap-seen', 1);

    expect(JSON.parse(String(record?.value))).toEqual([broker.bootstrap]);
  });
});

/** cleanup.policy of each topic, read with DescribeConfigs. */
async function cleanupPolicies(topics: string[]): Promise<Record<string, string | undefined>> {
  const admin = kafka.admin();
  await admin.connect();
  onTestFinished(() => admin.disconnect());
  const described = await admin.describeConfigs({
    includeSynonyms: false,
    resources: topics.map((name) => ({
      type: TOPIC_RESOURCE,
      name,
      configNames: ['cleanup.policy'],
    })),
  });
  return Object.fromEntries(
    described.resources.map((r) => [
      r.resourceName,
      r.configEntries.find((e) => e.configName === 'cleanup.policy')?.configValue,
    ]),
  );
}

import { describe, expect, it } from 'vitest';
import type { ConnectorTaskId } from '../../../../src/connect/herder/herder.ts';
import { StatusReporter } from '../../../../src/connect/herder/status-reporter.ts';
import {
  type ConnectorStatus,
  canWriteSafely,
  type StatusBackingStore,
  type TaskStatus,
  type TopicStatus,
} from '../../../../src/connect/storage/status-backing-store.ts';
import { getLogger } from '../../../../src/util/logger.ts';

/**
 * An in-memory StatusBackingStore whose fenced writes are slower than plain ones, as
 * the Kafka store's are (they read the topic to its end first). `log` is the order in
 * which writes took effect.
 */
class SlowFencedStore implements StatusBackingStore {
  readonly log: string[] = [];
  private readonly connectorsByName = new Map<string, ConnectorStatus>();
  private readonly tasks = new Map<string, TaskStatus>();
  private readonly topics: TopicStatus[] = [];
  private settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

  async start() {}
  async stop() {}
  async readToEnd() {}
  async put(s: ConnectorStatus) {
    await this.settle(1);
    this.connectorsByName.set(s.connector, s);
    this.log.push(`${s.connector}=${s.state}`);
  }
  async putSafe(s: ConnectorStatus) {
    await this.settle(20);
    if (!canWriteSafely(this.connectorsByName.get(s.connector), s)) return false;
    await this.put(s);
    return true;
  }
  async putTask(s: TaskStatus) {
    await this.settle(1);
    this.tasks.set(`${s.id.connector}-${s.id.task}`, s);
    this.log.push(`${s.id.connector}-${s.id.task}=${s.state}`);
  }
  async putTaskSafe(s: TaskStatus) {
    await this.settle(20);
    if (!canWriteSafely(this.tasks.get(`${s.id.connector}-${s.id.task}`), s)) return false;
    await this.putTask(s);
    return true;
  }
  async putTopic(s: TopicStatus) {
    this.topics.push(s);
    this.log.push(`topic ${s.connector}:${s.topic}`);
  }
  async deleteConnector() {}
  async deleteTopic() {}
  get(connector: string) {
    return this.connectorsByName.get(connector);
  }
  getTask(id: ConnectorTaskId) {
    return this.tasks.get(`${id.connector}-${id.task}`);
  }
  getAll() {
    return [...this.tasks.values()];
  }
  getTopics(connector: string) {
    return this.topics.filter((t) => t.connector === connector);
  }
  hasTopic(connector: string, topic: string) {
    return this.topics.some((t) => t.connector === connector && t.topic === topic);
  }
  connectors() {
    return [...this.connectorsByName.keys()];
  }
}

function reporter(store: StatusBackingStore, generation = 3, topicTracking = true) {
  return new StatusReporter({
    store,
    workerId: () => 'w1:8083',
    generation: () => generation,
    topicTracking,
    logger: getLogger('test.status-reporter'),
  });
}

describe('StatusReporter', () => {
  it('writes the states of one task in the order reported, though a fenced write is slower', async () => {
    const store = new SlowFencedStore();
    const r = reporter(store);
    const id = { connector: 'c', task: 0 };
    r.taskState(id, 'RESTARTING');
    r.taskState(id, 'UNASSIGNED');
    r.taskState(id, 'RUNNING');
    await r.flush();
    expect(store.log).toEqual(['c-0=RESTARTING', 'c-0=UNASSIGNED', 'c-0=RUNNING']);
    expect(store.getTask(id)).toMatchObject({
      state: 'RUNNING',
      workerId: 'w1:8083',
      generation: 3,
    });
  });

  it('flush() resolves only once every reported state is written', async () => {
    const store = new SlowFencedStore();
    const r = reporter(store);
    r.unassigned({ connectors: ['a', 'b'], tasks: [{ connector: 'a', task: 0 }] });
    expect(store.log).toEqual([]);
    await r.flush();
    expect(store.log.sort()).toEqual(['a-0=UNASSIGNED', 'a=UNASSIGNED', 'b=UNASSIGNED']);
  });

  it('an UNASSIGNED report does not overwrite a newer generation written by another worker', async () => {
    const store = new SlowFencedStore();
    await store.put({
      connector: 'c',
      state: 'RUNNING',
      trace: null,
      workerId: 'w2:8083',
      generation: 5,
    });
    const r = reporter(store, 4);
    r.connectorState('c', 'UNASSIGNED');
    await r.flush();
    expect(store.get('c')).toMatchObject({ state: 'RUNNING', workerId: 'w2:8083' });
  });

  it('neither does a FAILED report of a task another worker took over in a newer generation', async () => {
    const store = new SlowFencedStore();
    const id = { connector: 'c', task: 0 };
    await store.putTask({ id, state: 'RUNNING', trace: null, workerId: 'w2:8083', generation: 5 });
    const r = reporter(store, 4);
    r.taskState(id, 'FAILED', 'fenced');
    r.taskState(id, 'UNASSIGNED');
    await r.flush();
    expect(store.getTask(id)).toMatchObject({ state: 'RUNNING', workerId: 'w2:8083' });
    // Its own task failing is written as ever.
    const own = reporter(store, 6);
    own.taskState({ connector: 'd', task: 0 }, 'FAILED', 'boom');
    await own.flush();
    expect(store.getTask({ connector: 'd', task: 0 })).toMatchObject({ state: 'FAILED' });
  });

  it('records each active topic once, and only when topic tracking is on', async () => {
    const store = new SlowFencedStore();
    const r = reporter(store);
    r.topicUsed('c', 't');
    r.topicUsed('c', 't');
    await r.flush();
    expect(store.log).toEqual(['topic c:t']);
    const off = new SlowFencedStore();
    const r2 = reporter(off, 3, false);
    r2.topicUsed('c', 't');
    await r2.flush();
    expect(off.log).toEqual([]);
  });
});

/**
 * WorkerSourceTask through the Worker, with a real broker in the test process and an
 * in-memory offset store:
 *   - the offset commit of a stopping at-least-once task covers every record the broker
 *     acknowledged, even when a periodic commit is still in flight at the stop (its
 *     snapshot predates the last acknowledgements): a graceful restart repeats nothing;
 *   - a task whose connector requires exactly-once, on a worker without it, is RUNNING
 *     with the reason as its status trace.
 */
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { definePlugins, type SourceRecord } from '../../../../src/connect/api/index.ts';
import { connectorOffsets } from '../../../../src/connect/runtime/connector-offset-reader.ts';
import { loadPlugins } from '../../../../src/connect/runtime/plugins.ts';
import { Worker } from '../../../../src/connect/runtime/worker.ts';
import { MemoryOffsetBackingStore } from '../../../../src/connect/storage/memory-offset-backing-store.ts';
import { getLogger } from '../../../../src/util/logger.ts';
import { startTestBroker, type TestBroker } from '../../../helpers/broker.ts';
import { useTmpDir } from '../../../helpers/tmp-dir.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { workerConfig } from '../../../integration/standalone/standalone-helpers.ts';

let broker: TestBroker;
beforeAll(async () => {
  broker = await startTestBroker();
});
afterAll(async () => {
  await broker?.stop();
});

/** A store whose first write waits for `release()`. */
class HeldStore extends MemoryOffsetBackingStore {
  entered = false;
  private let!: () => void;
  private readonly gate = new Promise<void>((resolve) => {
    this.let = resolve;
  });
  private first = true;

  release(): void {
    this.let();
  }

  override async set(entries: ReadonlyMap<string, string | null>): Promise<void> {
    if (this.first) {
      this.first = false;
      this.entered = true;
      await this.gate;
    }
    await super.set(entries);
  }
}

let secondBatch: () => void = () => {};
const acked: number[] = [];

const idleTask = () => ({
  version: () => '1',
  start() {},
  async poll(): Promise<SourceRecord[] | null> {
    await new Promise((r) => setTimeout(r, 20));
    return null;
  },
  stop() {},
});

const plugins = definePlugins(
  {
    type: 'source',
    className: 'test.IdleSource',
    version: '1',
    configDefs: [],
    createConnector: () => ({
      version: () => '1',
      start() {},
      taskConfigs: () => [{}],
      stop() {},
      exactlyOnceSupport: () => 'SUPPORTED' as const,
    }),
    createTask: idleTask,
  },
  {
    type: 'source',
    className: 'test.TwoBatchSource',
    version: '1',
    configDefs: [],
    createConnector: () => ({ version: () => '1', start() {}, taskConfigs: () => [{}], stop() {} }),
    createTask: () => {
      let polls = 0;
      const batch = (from: number): SourceRecord[] =>
        [0, 1, 2, 3, 4].map((i) => ({
          topic: 'two-batches',
          value: `v${from + i}`,
          sourcePartition: { stream: 'only' },
          sourceOffset: { seq: from + i },
        }));
      return {
        version: () => '1',
        start() {},
        async poll(): Promise<SourceRecord[] | null> {
          polls++;
          if (polls === 1) return batch(0);
          if (polls === 2) {
            // The second batch only once the periodic commit of the first is in flight.
            await new Promise<void>((resolve) => {
              secondBatch = resolve;
            });
            return batch(5);
          }
          await new Promise((r) => setTimeout(r, 20));
          return null;
        },
        commitRecord(record: SourceRecord) {
          acked.push(Number((record.sourceOffset as { seq: number }).seq));
        },
        stop() {},
      };
    },
  },
);

async function useWorker(store: MemoryOffsetBackingStore, states: string[] = []) {
  const registry = await loadPlugins({ pluginPath: [], logger: getLogger('test') });
  registry.add(plugins, 'test');
  const worker = new Worker({
    workerId: 'test:0',
    config: workerConfig(broker.bootstrap, useTmpDir(), { 'offset.flush.interval.ms': '50' }),
    plugins: registry,
    offsetStore: store,
    status: {
      connectorState() {},
      taskState: (id, state, trace) =>
        states.push(`${id.connector}-${id.task} ${state} ${trace ?? ''}`),
    },
  });
  await worker.start();
  onTestFinished(() => worker.stop());
  return worker;
}

describe('WorkerSourceTask', () => {
  it('a task required to run exactly-once on a worker without it is RUNNING with the reason as trace', async () => {
    const states: string[] = [];
    const worker = await useWorker(new MemoryOffsetBackingStore(), states);
    const config = { 'connector.class': 'test.IdleSource', 'exactly.once.support': 'required' };
    await worker.startConnector('idle', config, 'RUNNING', () => {});
    await worker.startTask({ connector: 'idle', task: 0 }, config, {}, 'RUNNING');
    expect(states).toContain(
      'idle-0 RUNNING exactly.once.support=required, but this task runs at-least-once: its worker has exactly.once.source.support=disabled',
    );
  });

  it('a stopping task commits the offsets of every acknowledged record, after a periodic commit still in flight', async () => {
    const store = new HeldStore();
    const worker = await useWorker(store);
    const config = { 'connector.class': 'test.TwoBatchSource' };
    const id = { connector: 'two', task: 0 };
    await worker.startConnector('two', config, 'RUNNING', () => {});
    await worker.startTask(id, config, {}, 'RUNNING');

    await waitFor('a periodic commit in flight', () => (store.entered ? true : undefined));
    secondBatch();
    await waitFor('the second batch acknowledged', () => (acked.includes(9) ? true : undefined));
    const stopped = worker.stopTasks([id]);
    setTimeout(() => store.release(), 50);
    await stopped;

    expect(await connectorOffsets('two', store)).toEqual([
      { partition: { stream: 'only' }, offset: { seq: 9 } },
    ]);
  });
});

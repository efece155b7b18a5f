/**
 * The distributed herder's work on one worker (assigned-work.ts, config-updates.ts)
 * against a recording Worker: plugin starts are launched, never awaited on the
 * herder's loop, so a connector or task whose start never returns holds up no
 * rebalance or config event; the connector's `deleted` hook runs on the worker that
 * runs the connector when the config topic says it was deleted (a tombstone), and on
 * no revocation, stop or restart.
 */
import { describe, expect, it } from 'vitest';
import { AssignedWork } from '../../../../src/connect/herder/assigned-work.ts';
import { configUpdates } from '../../../../src/connect/herder/config-updates.ts';
import type {
  ConnectorConfigMap,
  ConnectorTaskId,
  TargetState,
} from '../../../../src/connect/herder/herder.ts';
import type { RebalanceHandler } from '../../../../src/connect/herder/rebalance-handler.ts';
import type { StatusReporter } from '../../../../src/connect/herder/status-reporter.ts';
import { SerialExecutor } from '../../../../src/connect/runtime/serial-executor.ts';
import type { Worker } from '../../../../src/connect/runtime/worker.ts';
import type {
  ClusterConfigState,
  ConfigBackingStore,
} from '../../../../src/connect/storage/config-backing-store.ts';
import type { StatusBackingStore } from '../../../../src/connect/storage/status-backing-store.ts';
import { getLogger } from '../../../../src/util/logger.ts';

const never = new Promise<never>(() => {});

/** A Worker that records the herder's calls; `hung` connectors' and tasks' starts never return. */
function recordingWorker(hung: { connectors?: string[]; tasks?: string[] } = {}) {
  const calls: string[] = [];
  const running = new Set<string>();
  const worker = {
    startConnector(name: string, _config: ConnectorConfigMap, target: TargetState) {
      calls.push(`startConnector ${name} ${target}`);
      if (hung.connectors?.includes(name)) return never;
      running.add(name);
      return Promise.resolve(true);
    },
    isConnectorRunning: (name: string) => running.has(name),
    async connectorTaskConfigs(name: string) {
      calls.push(`taskConfigs ${name}`);
      return [{ task: '0' }];
    },
    startTask(id: ConnectorTaskId) {
      calls.push(`startTask ${id.connector}-${id.task}`);
      return hung.tasks?.includes(`${id.connector}-${id.task}`) ? never : Promise.resolve(true);
    },
    async stopTasks(ids: ConnectorTaskId[]) {
      if (ids.length > 0) calls.push(`stopTasks ${ids.map((t) => `${t.connector}-${t.task}`)}`);
    },
    async stopConnector(name: string) {
      running.delete(name);
      calls.push(`stopConnector ${name}`);
    },
    async deleteConnector(name: string) {
      running.delete(name);
      calls.push(`deleteConnector ${name}`);
    },
    async setConnectorTargetState(name: string, target: TargetState) {
      calls.push(`target ${name} ${target}`);
      if (hung.connectors?.includes(name)) await never;
    },
  };
  return { worker: worker as unknown as Worker, calls };
}

function configs(names: string[]): ConfigBackingStore {
  const snapshot: ClusterConfigState = {
    offset: 10,
    connectorConfigs: new Map(names.map((n) => [n, { 'connector.class': 'test.X', name: n }])),
    targetStates: new Map(),
    taskCounts: new Map(names.map((n) => [n, 1])),
    taskConfigs: new Map(names.map((n) => [n, [{ task: '0' }]])),
    inconsistent: new Set(),
    taskCountRecords: new Map(),
    taskConfigGenerations: new Map(),
    pendingFencing: new Set(),
  };
  return {
    snapshot: () => snapshot,
    putTaskConfigs: async () => {},
  } as unknown as ConfigBackingStore;
}

function setUp(names: string[], hung?: { connectors?: string[]; tasks?: string[] }) {
  const { worker, calls } = recordingWorker(hung);
  const loop = new SerialExecutor();
  const reporter = {
    unassigned() {},
    flush: async () => {},
    connectorState() {},
    taskState() {},
  } as unknown as StatusReporter;
  const status = {
    get: () => undefined,
    getTask: () => undefined,
    deleteConnector: async () => {},
  } as unknown as StatusBackingStore;
  const work = new AssignedWork({
    worker,
    configs: configs(names),
    status,
    reporter,
    logger: getLogger('test'),
    owns: () => true,
    enqueue: (_what, job) => void loop.run(job),
  });
  const listener = configUpdates({
    work,
    rebalance: { needsRebalance: () => false } as unknown as RebalanceHandler,
    isLeader: () => false,
    requestRejoin() {},
    enqueue: (_what, job) => void loop.run(job),
    stopping: () => false,
    logger: getLogger('test'),
  });
  return { work, calls, loop, listener };
}

const all = (names: string[]) => ({
  connectors: names,
  tasks: names.map((connector) => ({ connector, task: 0 })),
});

describe('AssignedWork', () => {
  it('an assignment does not wait for a connector or a task whose start never returns', async () => {
    const { work, calls, loop } = setUp(['stuck', 'fine', 'slow-task'], {
      connectors: ['stuck'],
      tasks: ['slow-task-0'],
    });
    await work.start(all(['stuck', 'fine', 'slow-task']));
    await loop.idle();
    expect(calls).toEqual(
      expect.arrayContaining([
        'startConnector stuck RUNNING',
        'startConnector fine RUNNING',
        'startTask stuck-0',
        'startTask fine-0',
        'startTask slow-task-0',
        'taskConfigs fine',
      ]),
    );
    expect(calls).not.toContain('taskConfigs stuck');
    // The loop is free: a revocation of the stuck work runs at once.
    await work.stop(all(['stuck']));
    expect(calls.slice(-2)).toEqual(['stopTasks stuck-0', 'stopConnector stuck']);
  });

  it('a target state change does not wait for the connector transition', async () => {
    const { work, calls, listener, loop } = setUp(['stuck'], { connectors: ['stuck'] });
    await work.start(all(['stuck']));
    listener.onConnectorTargetStateChange('stuck');
    await loop.idle();
    expect(calls).toContain('target stuck RUNNING');
  });

  it('a tombstone for a connector this worker runs stops its tasks, then deletes it (its deleted hook); revocations, stops and restarts never do', async () => {
    const { work, calls, listener, loop } = setUp(['a', 'b']);
    await work.start(all(['a', 'b']));
    await loop.idle();
    await work.onRestartRequest({ connector: 'a', onlyFailed: false, includeTasks: true });
    await work.stop(all(['b']));
    expect(calls.filter((c) => c.startsWith('deleteConnector'))).toEqual([]);

    calls.length = 0;
    listener.onConnectorConfigRemove('a');
    listener.onConnectorConfigRemove('b'); // no longer this worker's: nothing to do here
    await loop.idle();
    expect(calls).toEqual(['stopTasks a-0', 'deleteConnector a']);
  });
});

import { describe, expect, it } from 'vitest';
import { MemoryStatusBackingStore } from '../../../../src/connect/storage/memory-status-backing-store.ts';

const id = { connector: 'cdc', task: 0 };

describe('MemoryStatusBackingStore', () => {
  it('keeps the trace of a RUNNING task, and answers without one once a RUNNING comes without', () => {
    const store = new MemoryStatusBackingStore('host:8083');

    store.taskState(id, 'RUNNING', 'waiting for X');
    const troubled = store.task(id);
    store.taskState(id, 'RUNNING');

    expect(troubled).toEqual({
      id: 0,
      state: 'RUNNING',
      worker_id: 'host:8083',
      trace: 'waiting for X',
    });
    expect(store.task(id)).toEqual({ id: 0, state: 'RUNNING', worker_id: 'host:8083' });
  });

  it('keeps a FAILED trace for tasks and connectors, and leaves an empty trace out', () => {
    const store = new MemoryStatusBackingStore('host:8083');

    store.connectorState('cdc', 'FAILED', 'Error: boom');
    store.taskState(id, 'FAILED', 'Error: boom');
    store.taskState({ connector: 'cdc', task: 1 }, 'RUNNING', '');

    expect(store.connector('cdc')).toEqual({
      state: 'FAILED',
      worker_id: 'host:8083',
      trace: 'Error: boom',
    });
    expect(store.connectorTasks('cdc')).toEqual([
      { id: 0, state: 'FAILED', worker_id: 'host:8083', trace: 'Error: boom' },
      { id: 1, state: 'RUNNING', worker_id: 'host:8083' },
    ]);
  });
});

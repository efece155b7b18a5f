/**
 * WorkerConnector under deadlines (worker-connector.ts): a start that does not return
 * fails the connector at connector.start.timeout.ms and is stopped if it returns
 * later; stop() never waits behind it; calls on the instance never overlap; deleted()
 * comes after stop() and never rejects. Time is ManualTimers: nothing sleeps.
 */
import { describe, expect, it } from 'vitest';
import type { Connector, ConnectorConfig } from '../../../../src/connect/api/connector.ts';
import type { ConnectorState } from '../../../../src/connect/herder/herder.ts';
import { WorkerConnector } from '../../../../src/connect/runtime/worker-connector.ts';
import { getLogger } from '../../../../src/util/logger.ts';
import { ManualTimers } from '../../../../src/util/timers.ts';

const START_MS = 60_000;
const STOP_MS = 5000;
const config: ConnectorConfig = { 'connector.class': 'test.Scripted', name: 'c' };

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  reject: (e: Error) => void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A connector whose calls return what the test scripts, recording calls and overlaps. */
function scripted(script: { start?: Deferred; stop?: Deferred; deleted?: () => void } = {}) {
  const calls: string[] = [];
  let inCall = 0;
  let overlapped = false;
  const track = async (name: string, wait?: Promise<void>) => {
    calls.push(name);
    if (inCall > 0) overlapped = true;
    inCall++;
    try {
      await wait;
    } finally {
      inCall--;
    }
  };
  const connector: Connector = {
    version: () => '1',
    start: () => track('start', script.start?.promise),
    taskConfigs: () => [{}],
    stop: () => track('stop', script.stop?.promise),
    deleted: (c) => {
      calls.push(`deleted ${c.name}`);
      script.deleted?.();
    },
  };
  return { connector, calls, overlapped: () => overlapped };
}

function make(connector: Connector) {
  const timers = new ManualTimers();
  const states: Array<{ state: ConnectorState; trace?: string }> = [];
  const wc = new WorkerConnector({
    name: 'c',
    type: 'sink',
    connector,
    config,
    offsetReader: { offset: async () => null, offsets: async () => new Map() } as never,
    status: {
      connectorState: (_c, state, trace) => states.push({ state, ...(trace ? { trace } : {}) }),
      taskState() {},
    },
    logger: getLogger('test'),
    onReconfigure() {},
    timers,
    startTimeoutMs: START_MS,
    stopTimeoutMs: STOP_MS,
  });
  return { wc, timers, states };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('WorkerConnector deadlines', () => {
  it('a start that does not return fails the connector at its deadline; if it returns later, that instance is stopped and reports nothing', async () => {
    const start = deferred();
    const plugin = scripted({ start });
    const { wc, timers, states } = make(plugin.connector);
    const transition = wc.transitionTo('RUNNING');
    await settled();
    timers.advance(START_MS);
    expect(await transition).toBe(false);
    expect(states).toHaveLength(1);
    expect(states[0]?.state).toBe('FAILED');
    expect(states[0]?.trace).toContain(`Connector c did not start within ${START_MS} ms`);

    start.resolve();
    await settled();
    await settled();
    expect(plugin.calls).toEqual(['start', 'stop']);
    expect(states.map((s) => s.state)).toEqual(['FAILED']);
    expect(wc.isRunning).toBe(false);
  });

  it('stop() while the start has not returned ends the instance at once; the connector is stopped only after its start returned', async () => {
    const start = deferred();
    const plugin = scripted({ start });
    const { wc, states } = make(plugin.connector);
    const transition = wc.transitionTo('RUNNING');
    await settled();
    await wc.stop();
    expect(await transition).toBe(false);
    expect(states.map((s) => s.state)).toEqual(['UNASSIGNED']);
    expect(plugin.calls).toEqual(['start']);

    start.resolve();
    await settled();
    await settled();
    expect(plugin.calls).toEqual(['start', 'stop']);
    expect(plugin.overlapped()).toBe(false);
    expect(states.map((s) => s.state)).toEqual(['UNASSIGNED']);
  });

  it('a pause during a start that does not return pauses at once; a resume starts again only after that start returned and was stopped', async () => {
    const start = deferred();
    const plugin = scripted({ start });
    const { wc, states } = make(plugin.connector);
    const starting = wc.transitionTo('RUNNING');
    await settled();
    expect(await wc.transitionTo('PAUSED')).toBe(true);
    expect(await starting).toBe(false);
    expect(states.map((s) => s.state)).toEqual(['PAUSED']);
    const resuming = wc.transitionTo('RUNNING');
    await settled();
    expect(plugin.calls).toEqual(['start']);

    start.resolve();
    expect(await resuming).toBe(true);
    expect(plugin.calls).toEqual(['start', 'stop', 'start']);
    expect(plugin.overlapped()).toBe(false);
    expect(states.map((s) => s.state)).toEqual(['PAUSED', 'RUNNING']);
  });

  it('a stop that does not return is abandoned at task.shutdown.graceful.timeout.ms', async () => {
    const stop = deferred();
    const plugin = scripted({ stop });
    const { wc, timers } = make(plugin.connector);
    expect(await wc.transitionTo('RUNNING')).toBe(true);
    const stopping = wc.stop();
    await settled();
    timers.advance(STOP_MS);
    await stopping;
    expect(plugin.calls).toEqual(['start', 'stop']);
  });

  it('deleted() comes after stop() with the config; a throwing hook is logged, not thrown', async () => {
    const plugin = scripted({
      deleted: () => {
        throw new Error('cannot drop the slot');
      },
    });
    const { wc } = make(plugin.connector);
    await wc.transitionTo('RUNNING');
    await wc.stop();
    await expect(wc.deleted()).resolves.toBeUndefined();
    expect(plugin.calls).toEqual(['start', 'stop', 'deleted c']);
    expect(wc.hasCallInFlight).toBe(false);
  });

  it('a pause stops the started connector and a resume starts it again; neither calls deleted()', async () => {
    const plugin = scripted();
    const { wc, states } = make(plugin.connector);
    await wc.transitionTo('RUNNING');
    await wc.transitionTo('PAUSED');
    await wc.transitionTo('RUNNING');
    await wc.stop();
    expect(plugin.calls).toEqual(['start', 'stop', 'start', 'stop']);
    expect(states.map((s) => s.state)).toEqual(['RUNNING', 'PAUSED', 'RUNNING', 'UNASSIGNED']);
  });
});

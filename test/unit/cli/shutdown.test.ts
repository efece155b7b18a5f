import { EventEmitter } from 'node:events';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { FORCED_EXIT_CODE, Shutdown, TIMEOUT_EXIT_CODE } from '../../../src/util/shutdown.ts';

const silent = pino({ level: 'silent' });

function setup(timeoutMs = 30_000) {
  const signals = new EventEmitter();
  const exits: number[] = [];
  const shutdown = new Shutdown({
    signals,
    timeoutMs,
    forceExit: (code) => exits.push(code),
    logger: silent,
  });
  shutdown.installSignalHandlers();
  return { signals, exits, shutdown };
}

describe('Shutdown', () => {
  it('stops components in reverse start order on SIGTERM and completes with code 0', async () => {
    const { signals, shutdown } = setup();
    const stopped: string[] = [];
    for (const name of ['broker', 'worker', 'task']) {
      shutdown.register(name, async () => {
        stopped.push(name);
      });
    }
    signals.emit('SIGTERM', 'SIGTERM');
    expect(await shutdown.done).toBe(0);
    expect(stopped).toEqual(['task', 'worker', 'broker']);
  });

  it('waits for each stop before starting the next', async () => {
    const { shutdown } = setup();
    const events: string[] = [];
    let release!: () => void;
    shutdown.register('first', async () => {
      events.push('first');
    });
    shutdown.register('second', async () => {
      events.push('second started');
      await new Promise<void>((r) => {
        release = r;
      });
      events.push('second finished');
    });
    const result = shutdown.shutdown();
    await Promise.resolve();
    expect(events).toEqual(['second started']);
    release();
    expect(await result).toBe(0);
    expect(events).toEqual(['second started', 'second finished', 'first']);
  });

  it('stops the others when one stop fails, and completes with code 1', async () => {
    const { shutdown } = setup();
    const stopped: string[] = [];
    shutdown.register('a', async () => {
      stopped.push('a');
    });
    shutdown.register('b', async () => {
      throw new Error('disk gone');
    });
    expect(await shutdown.shutdown()).toBe(1);
    expect(stopped).toEqual(['a']);
  });

  it('stops each component once however often shutdown is asked for', async () => {
    const { signals, shutdown } = setup();
    let stops = 0;
    shutdown.register('a', async () => {
      stops++;
    });
    const first = shutdown.shutdown();
    const second = shutdown.shutdown('SIGINT');
    expect(await first).toBe(0);
    expect(await second).toBe(0);
    signals.emit('SIGTERM', 'SIGTERM');
    expect(stops).toBe(1);
  });

  it('forces exit on a second signal while a component is still stopping', async () => {
    const { signals, exits, shutdown } = setup();
    let release!: () => void;
    shutdown.register(
      'stuck',
      () =>
        new Promise<void>((r) => {
          release = r;
        }),
    );
    signals.emit('SIGINT', 'SIGINT');
    expect(exits).toEqual([]);
    signals.emit('SIGINT', 'SIGINT');
    expect(exits).toEqual([FORCED_EXIT_CODE]);
    // Let the stop finish so no timer outlives the test.
    release();
    await shutdown.done;
  });

  it('forces exit when stopping takes longer than the timeout', async () => {
    const signals = new EventEmitter();
    let exited!: (code: number) => void;
    const exit = new Promise<number>((r) => {
      exited = r;
    });
    const shutdown = new Shutdown({ signals, timeoutMs: 1, forceExit: exited, logger: silent });
    let release!: () => void;
    shutdown.register(
      'stuck',
      () =>
        new Promise<void>((r) => {
          release = r;
        }),
    );
    void shutdown.shutdown();
    expect(await exit).toBe(TIMEOUT_EXIT_CODE);
    release();
    await shutdown.done;
  });

  it('removes its signal listeners once done', async () => {
    const { signals, shutdown } = setup();
    expect(signals.listenerCount('SIGTERM')).toBe(1);
    await shutdown.shutdown();
    expect(signals.listenerCount('SIGTERM')).toBe(0);
    expect(signals.listenerCount('SIGINT')).toBe(0);
  });

  it('refuses registrations after shutdown has started', async () => {
    const { shutdown } = setup();
    await shutdown.shutdown();
    expect(() => shutdown.register('late', async () => {})).toThrow(/already started/);
  });
});

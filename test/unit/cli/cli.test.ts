import { type AddressInfo, createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { type BrokerOptions, type RunningBroker, startBroker } from '../../../src/broker/broker.ts';
import { capturedContext } from '../../../src/cli/cli-context.ts';
import { main } from '../../../src/cli.ts';
import { startTestBroker } from '../../helpers/broker.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';

/**
 * A stand-in for the broker that is being built elsewhere: a real TCP listener with the
 * broker's start/stop contract, recording what the CLI asked of it.
 */
function standInBroker(events: string[]) {
  const started: BrokerOptions[] = [];
  const startBroker = async (options: BrokerOptions): Promise<RunningBroker> => {
    started.push(options);
    const server = createServer((socket) => socket.destroy());
    await new Promise<void>((r) => server.listen(options.port, options.host, r));
    const address = server.address() as { port: number };
    events.push('broker started');
    return {
      host: options.host,
      port: address.port,
      stop: () =>
        new Promise<void>((r) =>
          server.close(() => {
            events.push('broker stopped');
            r();
          }),
        ),
    };
  };
  return { startBroker, started };
}

/** The real broker, recording when the CLI starts and stops it. */
function recordingBroker(events: string[]) {
  return async (options: BrokerOptions): Promise<RunningBroker> => {
    const broker = await startBroker({
      ...options,
      config: { ...options.config, 'offsets.topic.num.partitions': 2 },
    });
    events.push('broker started');
    return {
      host: broker.host,
      port: broker.port,
      stop: async () => {
        await broker.stop();
        events.push('broker stopped');
      },
    };
  };
}

/** A captured context whose `ready` resolves when a stderr line matches `pattern`. */
function contextWaitingFor(pattern: RegExp, overrides = {}) {
  let ready!: () => void;
  const whenReady = new Promise<void>((r) => {
    ready = r;
  });
  const ctx = capturedContext(overrides);
  const err = ctx.err;
  ctx.err = (line) => {
    err(line);
    if (pattern.test(line)) ready();
  };
  return { ctx, whenReady };
}

describe('connect CLI (in-process)', () => {
  it('--help of each command lists its keys with defaults and environment names', async () => {
    for (const [command, keys] of [
      ['worker', ['bootstrap.servers', 'group.id', 'offset.flush.interval.ms', 'broker.port']],
      ['standalone', ['offset.storage.file.filename', 'plugin.path']],
      ['broker', ['broker.data.dir', 'log.segment.bytes', 'auto.create.topics.enable']],
    ] as const) {
      const ctx = capturedContext();
      expect(await main([command, '--help'], ctx)).toBe(0);
      const help = ctx.stdout.join('\n');
      for (const key of keys) expect(help).toContain(`  ${key} (`);
    }
    const worker = capturedContext();
    await main(['worker', '--help'], worker);
    expect(worker.stdout.join('\n')).toContain(
      'bootstrap.servers (list, default: empty: start the embedded broker',
    );
    expect(worker.stdout.join('\n')).toContain('[CONNECT_BOOTSTRAP_SERVERS]');
    const broker = capturedContext();
    await main(['broker', '--help'], broker);
    expect(broker.stdout.join('\n')).toContain('[BROKER_LOG_RETENTION_MS]');
  });

  it('exits 2 with one line per bad key and starts nothing', async () => {
    const events: string[] = [];
    const ctx = capturedContext({
      env: { CONNECT_SESSION_TIMEOUT_MS: 'soon' },
      startBroker: standInBroker(events).startBroker,
    });
    const code = await main(['worker', '-o', 'broker.port=-1', '-o', 'plugin.path=a,b'], ctx);
    expect(code).toBe(2);
    expect(ctx.stderr).toEqual([
      `error: Invalid value for configuration 'session.timeout.ms' (value "soon"): expected a whole number (from environment variable CONNECT_SESSION_TIMEOUT_MS)`,
      `error: Invalid value for configuration 'broker.port' (value "-1"): must be between 0 and 65535 (from -o)`,
    ]);
    expect(events).toEqual([]);
  });

  it('exits 2 naming a config provider it does not have, before starting anything', async () => {
    const events: string[] = [];
    const ctx = capturedContext({ startBroker: standInBroker(events).startBroker });
    const code = await main(
      [
        'worker',
        '-o',
        'config.providers=vault',
        '-o',
        'config.providers.vault.class=com.bettercloud.vault.VaultConfigProvider',
      ],
      ctx,
    );
    expect(code).toBe(2);
    expect(ctx.stderr).toEqual([
      expect.stringMatching(
        /^error: Invalid value for configuration 'config\.providers\.vault\.class' \(value "com\.bettercloud\.vault\.VaultConfigProvider"\): not supported: the worker has Kafka's FileConfigProvider, DirectoryConfigProvider, EnvVarConfigProvider/,
      ),
    ]);
    expect(events).toEqual([]);
  });

  it('exits 2 on a usage mistake', async () => {
    const ctx = capturedContext();
    expect(await main(['worker', '--no-such-flag'], ctx)).toBe(2);
    expect(ctx.stderr.join('\n')).toContain("unknown option '--no-such-flag'");
    expect(await main(['standalone'], capturedContext())).toBe(2);
  });

  it('warns about an unknown key and still runs', async () => {
    const ctx = capturedContext();
    const code = await main(
      ['worker', '-o', 'bootstrap.servers=127.0.0.1:1', '-o', 'grop.id=x'],
      ctx,
    );
    // Nothing listens on port 1: the worker gets as far as connecting, then says why it stops.
    expect(code).toBe(1);
    expect(ctx.stderr[0]).toBe(
      "warning: The configuration 'grop.id' (from -o) was supplied but isn't a known config; it is ignored.",
    );
    expect(ctx.stderr.at(-1)).toMatch(/^error: the worker failed to start: .*127\.0\.0\.1:1/);
  });

  it('worker with bootstrap.servers joins that cluster, starts no broker of its own, and stops on SIGTERM', async () => {
    const cluster = await startTestBroker();
    try {
      const events: string[] = [];
      const { ctx, whenReady } = contextWaitingFor(/^worker .* running/, {
        startBroker: recordingBroker(events),
      });
      const exit = main(
        [
          'worker',
          'config/worker.properties',
          '-o',
          `bootstrap.servers=${cluster.bootstrap}`,
          '-o',
          'listeners=http://127.0.0.1:0',
          '-o',
          'group.id=cli-test-remote',
        ],
        ctx,
      );
      await whenReady;
      ctx.signals.emit('SIGTERM', 'SIGTERM');
      expect(await exit).toBe(0);
      expect(events).toEqual([]);
      expect(ctx.stderr.join('\n')).toContain(`Kafka at ${cluster.bootstrap}`);
    } finally {
      await cluster.stop();
    }
  });

  it('worker without bootstrap.servers starts the embedded broker first and stops it last', async () => {
    const events: string[] = [];
    const dataDir = useTmpDir();
    const { ctx, whenReady } = contextWaitingFor(/^worker .* running/, {
      startBroker: recordingBroker(events),
    });
    const exit = main(
      [
        'worker',
        '-o',
        'broker.port=0',
        '-o',
        `broker.data.dir=${dataDir}`,
        '-o',
        'log.retention.ms=1000',
        '-o',
        'listeners=http://127.0.0.1:0',
      ],
      ctx,
    );
    await whenReady;
    expect(events).toEqual(['broker started']);
    // broker.port=0: the worker is told the port the broker really listens on.
    expect(ctx.stderr.join('\n')).toMatch(/Kafka at 127\.0\.0\.1:[1-9]\d*\)/);
    ctx.signals.emit('SIGTERM', 'SIGTERM');
    expect(await exit).toBe(0);
    expect(events).toEqual(['broker started', 'broker stopped']);
  });

  it('broker exits 1 naming the address when its port is taken', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      const ctx = capturedContext();
      const code = await main(
        ['broker', '-o', `broker.port=${port}`, '-o', `broker.data.dir=${useTmpDir()}`],
        ctx,
      );
      expect(code).toBe(1);
      expect(ctx.stderr).toContainEqual(
        expect.stringMatching(
          new RegExp(`^error: the broker failed to start on 127\\.0\\.0\\.1:${port}: .*EADDRINUSE`),
        ),
      );
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it('broker runs until SIGTERM, then stops the broker and exits 0', async () => {
    const events: string[] = [];
    const { ctx, whenReady } = contextWaitingFor(/^broker ready/, {
      startBroker: standInBroker(events).startBroker,
    });
    const exit = main(
      ['broker', '-o', 'broker.port=0', '-o', `broker.data.dir=${useTmpDir()}`],
      ctx,
    );
    await whenReady;
    expect(events).toEqual(['broker started']);
    ctx.signals.emit('SIGTERM', 'SIGTERM');
    expect(await exit).toBe(0);
    expect(events).toEqual(['broker started', 'broker stopped']);
    expect(ctx.signals.listenerCount('SIGTERM')).toBe(0);
  });

  it('broker forces exit 130 on a second signal while stopping hangs', async () => {
    const forced: number[] = [];
    let stopCalled!: () => void;
    const stopping = new Promise<void>((r) => {
      stopCalled = r;
    });
    let release!: () => void;
    const { ctx, whenReady } = contextWaitingFor(/^broker ready/, {
      forceExit: (code: number) => forced.push(code),
      startBroker: async (o: BrokerOptions): Promise<RunningBroker> => ({
        host: o.host,
        port: 1,
        stop: () => {
          stopCalled();
          return new Promise<void>((r) => {
            release = r;
          });
        },
      }),
    });
    const exit = main(['broker'], ctx);
    await whenReady;
    ctx.signals.emit('SIGINT', 'SIGINT');
    await stopping;
    ctx.signals.emit('SIGINT', 'SIGINT');
    expect(forced).toEqual([130]);
    // A real process is gone by now; here, let the stop finish so nothing outlives the test.
    release();
    await exit;
  });

  it('standalone validates every connector file before starting anything', async () => {
    const ctx = capturedContext();
    const code = await main(
      ['standalone', 'config/worker.properties', 'config/connectors/file-source.json', 'nope.json'],
      ctx,
    );
    expect(code).toBe(2);
    expect(ctx.stderr).toEqual(['error: nope.json: no such file']);
  });
});

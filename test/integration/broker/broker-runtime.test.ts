import { describe, expect, it, onTestFinished } from 'vitest';
import { startBrokerThread } from '../../../src/broker/broker-thread.ts';
import { consumeAll, kcat } from '../../conformance/helpers/kcat.ts';
import { useBrokerProcess } from '../../helpers/broker.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';

describe('running the broker', () => {
  it('on its own worker thread serves clients and stops on request', async () => {
    const dataDir = useTmpDir('broker-thread-');
    const broker = await startBrokerThread({
      host: '127.0.0.1',
      port: 0,
      dataDir,
      nodeId: 1,
      config: {},
    });
    onTestFinished(() => broker.stop());
    const bootstrap = `127.0.0.1:${broker.port}`;
    await kcat(['-b', bootstrap, '-P', '-t', 'threaded', '-K:'], 'a:1\nb:2\n');
    expect((await consumeAll(bootstrap, 'threaded')).map((r) => r.value)).toEqual(['1', '2']);
    await broker.stop();
    // Stopped for good: the data is closed cleanly and a new broker on it serves it.
    const again = await startBrokerThread({
      host: '127.0.0.1',
      port: 0,
      dataDir,
      nodeId: 1,
      config: {},
    });
    onTestFinished(() => again.stop());
    expect((await consumeAll(`127.0.0.1:${again.port}`, 'threaded')).map((r) => r.value)).toEqual([
      '1',
      '2',
    ]);
  });

  it('as `connect broker`, stops cleanly on SIGINT and keeps its data', async () => {
    const dataDir = useTmpDir('broker-cli-');
    const first = await useBrokerProcess(dataDir);
    await kcat(['-b', first.bootstrap, '-P', '-t', 'cli', '-K:'], 'k:v\n');
    first.process.signal('SIGINT');
    expect(await first.process.exited).toEqual({ code: 0, signal: null });
    expect(first.process.output()).toContain('broker stopped');
    const second = await useBrokerProcess(dataDir);
    expect(second.process.output().join('\n')).not.toMatch(/recovered partition log/);
    expect((await consumeAll(second.bootstrap, 'cli')).map((r) => r.value)).toEqual(['v']);
  });
});

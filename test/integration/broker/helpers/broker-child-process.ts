/**
 * The embedded broker as a child process (broker-child.ts), for crash tests that kill
 * it with SIGKILL, stopped at the end of the current test. Lighter than
 * `connect broker` (test/helpers/broker.ts's useBrokerProcess), which also loads the
 * rest of the CLI.
 */
import { fileURLToPath } from 'node:url';
import { onTestFinished } from 'vitest';
import { spawnProcess, type TestProcess } from '../../../helpers/processes.ts';

const entry = fileURLToPath(new URL('./broker-child.ts', import.meta.url));

export interface BrokerChild {
  process: TestProcess;
  port: number;
  bootstrap: string;
  /** SIGKILL; resolves with the signal the process died of. */
  kill(): Promise<NodeJS.Signals | null>;
}

/** Broker keys in `config` (over startBroker's defaults); `env` is added to the child's environment. */
export async function useBrokerChild(
  dataDir: string,
  config: Record<string, unknown> = {},
  env: Record<string, string> = {},
): Promise<BrokerChild> {
  const child = spawnProcess(
    process.execPath,
    ['--import', 'tsx', entry, dataDir, JSON.stringify(config)],
    { env },
  );
  onTestFinished(async () => {
    await child.stop();
  });
  const line = await child.waitForLine(/broker listening on [^:\s]+:\d+/);
  const port = Number(/listening on [^:\s]+:(\d+)/.exec(line)![1]);
  return {
    process: child,
    port,
    bootstrap: `127.0.0.1:${port}`,
    kill: async () => {
      child.signal('SIGKILL');
      return (await child.exited).signal;
    },
  };
}

/**
 * A private redis-server for outage tests (the machine's shared Redis is never
 * stopped: other tests use it). Its append-only file is fsynced on every write, so a
 * kill -9 loses nothing acknowledged, and a restart on the same port and folder comes
 * back with every job and position, as a real Redis with AOF does.
 */
import type { ExitStatus, TestProcess } from '../../../test/helpers/processes.ts';
import { useProcess } from '../../../test/helpers/processes.ts';

export interface PrivateRedis {
  port: number;
  /** kill -9 and wait for the exit. */
  kill(): Promise<ExitStatus>;
  /** Start again on the same port and folder; resolves when it accepts connections. */
  restart(): Promise<void>;
}

export async function usePrivateRedis(dir: string, port: number): Promise<PrivateRedis> {
  let p: TestProcess;
  const start = async () => {
    p = useProcess('redis-server', [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'yes',
      '--appendfsync',
      'always',
    ]);
    await p.waitForPort(port);
  };
  await start();
  return {
    port,
    kill: async () => {
      p.signal('SIGKILL');
      return p.exited;
    },
    restart: start,
  };
}

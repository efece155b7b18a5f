/**
 * The tasks' own Redis connections (ioredis), opened in the background at start so a
 * Redis that is down then is an outage like any later one, and `ready`, which the
 * tasks call before each round trip:
 *   - connected: go on;
 *   - the first connection attempt (or a reconnect attempt) still in progress: wait
 *     for its outcome (bounded by ioredis' connectTimeout), so a task's first put or
 *     poll does not count the time Redis takes to answer a new connection as an outage;
 *   - otherwise (closed, waiting to reconnect): fail at once, and the task reports the
 *     outage and backs off.
 * Commands never queue while disconnected (enableOfflineQueue off): a task learns of
 * an outage from the command it sends, not from a silent wait.
 */
import { Redis } from 'ioredis';
import { ioredisOptions, type RedisSettings } from './redis-settings.ts';

export function openRedis(s: RedisSettings, connectionName: string): Redis {
  const redis = new Redis({
    ...ioredisOptions(s),
    connectionName,
    lazyConnect: true,
    enableOfflineQueue: false,
    // A transaction whose answer was lost must not be sent again behind the task's
    // back: the sink re-reads its positions and decides (job-writer.ts).
    autoResendUnfulfilledCommands: false,
    retryStrategy: (times) => Math.min(100 * times, 1000),
  });
  // Errors surface on the commands that fail; an 'error' event without a listener
  // would be thrown.
  redis.on('error', () => {});
  redis.connect().catch(() => {});
  return redis;
}

export async function ready(redis: Redis): Promise<void> {
  if (redis.status === 'ready') return;
  if (redis.status === 'connecting' || redis.status === 'connect' || redis.status === 'wait') {
    await new Promise<void>((resolve) => {
      const done = () => {
        redis.off('ready', done);
        redis.off('close', done);
        redis.off('end', done);
        resolve();
      };
      redis.on('ready', done);
      redis.on('close', done);
      redis.on('end', done);
    });
    // The listener changed the status; TypeScript's narrowing from above does not know.
    if ((redis.status as string) === 'ready') return;
  }
  throw new Error(`not connected (connection ${redis.status})`);
}

/**
 * Redis for tests: REDIS_URL (default redis://127.0.0.1:6379), which test/global-setup.ts
 * starts when it can. Each use gets a unique key prefix, and every key under it is
 * deleted at teardown, so tests share one Redis without seeing each other's keys.
 * An unreachable Redis fails the test with how to provide one; it never skips.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { onTestFinished } from 'vitest';

export const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface TestRedis {
  /** A connected client; closed at teardown. */
  client: Redis;
  /** Unique to this use, ends with ':' (e.g. "test:3fa9c1d2:"); put it before every key. */
  prefix: string;
  /** The same namespace as a BullMQ `prefix` option (BullMQ adds the ':' itself). */
  bullPrefix: string;
  /** Connection options for libraries that open their own connections (BullMQ). */
  connection: { host: string; port: number; db: number; password?: string; username?: string };
  /** Delete every key under the prefix and close the client. */
  cleanup(): Promise<void>;
}

export async function connectTestRedis(urlText = redisUrl): Promise<TestRedis> {
  const url = new URL(urlText);
  const connection = {
    host: url.hostname,
    port: Number(url.port || 6379),
    db: Number(url.pathname.slice(1) || 0),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
  };
  const client = new Redis({
    ...connection,
    lazyConnect: true,
    connectTimeout: 2000,
    maxRetriesPerRequest: 1,
    retryStrategy: () => null,
  });
  // Connection errors surface as rejected commands (and the message below); without a
  // listener ioredis would also print each one as an unhandled error event.
  client.on('error', () => {});
  try {
    await client.connect();
    await client.ping();
  } catch (e) {
    client.disconnect();
    throw new Error(
      `Redis is not reachable at ${urlText} (${(e as Error).message}). Start one with ` +
        '`redis-server --daemonize yes` (Debian: apt-get install redis-server) or set REDIS_URL; ' +
        'test/global-setup.ts starts it automatically when redis-server is installed.',
    );
  }
  const prefix = `test:${randomBytes(4).toString('hex')}:`;
  const cleanup = async () => {
    if (client.status === 'end') return;
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      if (keys.length > 0) await client.del(...keys);
      cursor = next;
    } while (cursor !== '0');
    await client.quit();
  };
  return { client, prefix, bullPrefix: prefix.slice(0, -1), connection, cleanup };
}

/** Redis for the current test, cleaned up at its end. */
export async function useRedis(): Promise<TestRedis> {
  const redis = await connectTestRedis();
  onTestFinished(() => redis.cleanup());
  return redis;
}

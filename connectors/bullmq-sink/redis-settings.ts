/**
 * Where Redis is: `redis.url` (redis:// or rediss://user:password@host:port/db) as the
 * base, each of `redis.host`, `redis.port`, `redis.username`, `redis.password`,
 * `redis.db`, `redis.tls` overriding its part when set (so a password can stay out of
 * the URL). Neither set: 127.0.0.1:6379, db 0, no TLS.
 */
import type { RedisOptions } from 'ioredis';

export interface RedisSettings {
  host: string;
  port: number;
  username: string;
  password: string;
  db: number;
  tls: boolean;
}

export class RedisUrlError extends Error {}

export function redisSettings(v: Readonly<Record<string, unknown>>): RedisSettings {
  const s: RedisSettings = {
    host: '127.0.0.1',
    port: 6379,
    username: '',
    password: '',
    db: 0,
    tls: false,
  };
  const url = (v['redis.url'] as string | null) ?? '';
  if (url !== '') {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw new RedisUrlError('expected a URL such as redis://host:6379/0 or rediss://host:6380');
    }
    if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') {
      throw new RedisUrlError(`expected the redis:// or rediss:// scheme, not ${u.protocol}//`);
    }
    if (u.search !== '' || u.hash !== '') {
      throw new RedisUrlError(
        'query parameters and fragments are not supported; use the redis.* keys',
      );
    }
    s.tls = u.protocol === 'rediss:';
    if (u.hostname !== '') s.host = u.hostname.replace(/^\[(.*)\]$/, '$1');
    if (u.port !== '') s.port = Number(u.port);
    s.username = decodeURIComponent(u.username);
    s.password = decodeURIComponent(u.password);
    const path = u.pathname.replace(/^\//, '');
    if (path !== '') {
      if (!/^\d+$/.test(path))
        throw new RedisUrlError(`the path must be a database number, not /${path}`);
      s.db = Number(path);
    }
  }
  const host = v['redis.host'] as string | null;
  if (host) s.host = host;
  const port = v['redis.port'] as number | null;
  if (port !== null && port !== undefined) s.port = port;
  const username = v['redis.username'] as string | null;
  if (username) s.username = username;
  const password = v['redis.password'] as string | null;
  if (password) s.password = password;
  const db = v['redis.db'] as number | null;
  if (db !== null && db !== undefined) s.db = db;
  const tls = v['redis.tls'] as boolean | null;
  if (tls !== null && tls !== undefined) s.tls = tls;
  return s;
}

/** host:port/db, for messages (never the password). */
export function describeRedis(s: RedisSettings): string {
  return `${s.tls ? 'rediss' : 'redis'}://${s.host}:${s.port}/${s.db}`;
}

export function ioredisOptions(s: RedisSettings): RedisOptions {
  return {
    host: s.host,
    port: s.port,
    db: s.db,
    ...(s.username ? { username: s.username } : {}),
    ...(s.password ? { password: s.password } : {}),
    ...(s.tls ? { tls: { servername: s.host } } : {}),
  };
}

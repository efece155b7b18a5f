/**
 * The shared test helpers keep their promises: they give what they say and leave
 * nothing behind (directories, Redis keys, child processes), even when a test fails.
 */
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../helpers/ports.ts';
import { spawnProcess, useProcess } from '../../helpers/processes.ts';
import { connectTestRedis, useRedis } from '../../helpers/redis.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';

describe('test harness helpers', () => {
  it('freePort gives a port a server can listen on', async () => {
    const port = await freePort();
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
    await new Promise((r) => server.close(r));
  });

  let dirOfPreviousTest = '';
  it('useTmpDir gives an existing directory...', () => {
    dirOfPreviousTest = useTmpDir();
    expect(existsSync(dirOfPreviousTest)).toBe(true);
  });
  it('...which is gone once its test has finished', () => {
    expect(dirOfPreviousTest).not.toBe('');
    expect(existsSync(dirOfPreviousTest)).toBe(false);
  });

  let prefixOfPreviousTest = '';
  it('useRedis gives a connected client and a key prefix of its own...', async () => {
    const redis = await useRedis();
    prefixOfPreviousTest = redis.prefix;
    await redis.client.set(`${redis.prefix}a`, '1');
    await redis.client.hset(`${redis.prefix}b`, 'f', 'v');
    expect(await redis.client.get(`${redis.prefix}a`)).toBe('1');
    expect(redis.bullPrefix).toBe(redis.prefix.slice(0, -1));
  });
  it('...whose keys are deleted once its test has finished', async () => {
    const redis = await useRedis();
    expect(redis.prefix).not.toBe(prefixOfPreviousTest);
    expect(await redis.client.keys(`${prefixOfPreviousTest}*`)).toEqual([]);
  });

  it('an unreachable Redis fails with how to start one', async () => {
    const port = await freePort();
    await expect(connectTestRedis(`redis://127.0.0.1:${port}`)).rejects.toThrow(
      /Redis is not reachable at redis:\/\/127\.0\.0\.1:\d+ .*redis-server --daemonize yes.*REDIS_URL/,
    );
  });

  it('a process helper captures output and waits for a line', async () => {
    const child = useProcess(process.execPath, [
      '-e',
      'console.log("one"); console.error("two"); setTimeout(() => console.log("three"), 10)',
    ]);
    expect(await child.waitForLine(/^thr/)).toBe('three');
    expect(await child.exited).toEqual({ code: 0, signal: null });
    expect(child.output().sort()).toEqual(['one', 'three', 'two']);
  });

  it('waiting for a line a process never prints fails with its output once it exits', async () => {
    const child = useProcess(process.execPath, ['-e', 'console.log("bye")']);
    await expect(child.waitForLine('ready')).rejects.toThrow(
      /exited before printing a line matching ready\. Its output:\nbye/,
    );
  });

  it('stop() kills with SIGKILL a process that ignores SIGTERM', async () => {
    const child = spawnProcess(
      process.execPath,
      [
        '-e',
        'process.on("SIGTERM", () => console.log("ignored")); console.log("up"); setInterval(() => {}, 1000)',
      ],
      { killGraceMs: 200 },
    );
    try {
      await child.waitForLine('up');
      expect(await child.stop()).toEqual({ code: null, signal: 'SIGKILL' });
      expect(child.output()).toContain('ignored');
      expect(child.isRunning).toBe(false);
    } finally {
      await child.stop();
    }
  });

  it('waitForPort resolves once the child listens', async () => {
    const port = await freePort();
    const child = useProcess(process.execPath, [
      '-e',
      `require('node:net').createServer().listen(${port}, '127.0.0.1')`,
    ]);
    await child.waitForPort(port);
    expect(child.isRunning).toBe(true);
  });
});

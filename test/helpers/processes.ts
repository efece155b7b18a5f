/**
 * Child processes for integration tests: `connect` commands (broker, worker) or any
 * other command. Output is captured line by line (stdout and stderr interleaved as
 * they arrive) for waiting and for failure messages; `stop()` sends SIGTERM, then
 * SIGKILL after a grace period. `useProcess`/`useConnect` register stop() with
 * onTestFinished, and every child still alive when the test process exits is killed,
 * so no process outlives the suite even when a test fails or times out.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { onTestFinished } from 'vitest';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const connectBin = fileURLToPath(new URL('../../bin/connect.js', import.meta.url));

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface SpawnOptions {
  cwd?: string;
  /** Added to the test process's environment (undefined removes a variable). */
  env?: Record<string, string | undefined>;
  /** Time allowed after SIGTERM before SIGKILL, in stop(). */
  killGraceMs?: number;
  /** For `connect` commands: the script to run instead of the repository's bin/connect.js. */
  bin?: string;
}

const alive = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of alive) child.kill('SIGKILL');
});

export class TestProcess {
  readonly child: ChildProcess;
  readonly description: string;
  private readonly lines: string[] = [];
  private readonly waiters = new Set<() => void>();
  private readonly killGraceMs: number;
  /** Resolves when the process has exited and its output streams are closed. */
  readonly exited: Promise<ExitStatus>;

  constructor(command: string, args: readonly string[], options: SpawnOptions = {}) {
    this.description = [command, ...args].join(' ');
    this.killGraceMs = options.killGraceMs ?? 5000;
    const env: Record<string, string | undefined> = { ...process.env, ...options.env };
    for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
    this.child = spawn(command, args, {
      cwd: options.cwd ?? repoRoot,
      env: env as NodeJS.ProcessEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    alive.add(this.child);
    for (const stream of [this.child.stdout!, this.child.stderr!]) {
      let partial = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        const parts = (partial + chunk).split('\n');
        partial = parts.pop()!;
        this.push(parts);
      });
      stream.on('end', () => {
        if (partial !== '') this.push([partial]);
        partial = '';
      });
    }
    this.exited = new Promise((resolve) => {
      this.child.once('close', (code, signal) => {
        alive.delete(this.child);
        this.notify();
        resolve({ code, signal });
      });
      this.child.once('error', (error) => {
        alive.delete(this.child);
        this.push([`spawn error: ${error.message}`]);
        resolve({ code: null, signal: null });
      });
    });
  }

  private push(newLines: string[]): void {
    this.lines.push(...newLines);
    this.notify();
  }

  private notify(): void {
    for (const wake of [...this.waiters]) wake();
  }

  get isRunning(): boolean {
    return alive.has(this.child);
  }

  /** Everything printed so far, one entry per line. */
  output(): string[] {
    return [...this.lines];
  }

  /** Resolves with the first line (already printed or to come) matching `pattern`. */
  waitForLine(pattern: RegExp | string, timeoutMs = 30_000): Promise<string> {
    const matches = (line: string) =>
      typeof pattern === 'string' ? line.includes(pattern) : pattern.test(line);
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.lines.find(matches);
        if (found !== undefined) return finish(() => resolve(found));
        if (!this.isRunning) {
          return finish(() =>
            reject(this.failure(`exited before printing a line matching ${pattern}`)),
          );
        }
      };
      const timer = setTimeout(
        () => finish(() => reject(this.failure(`printed no line matching ${pattern}`))),
        timeoutMs,
      );
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        settle();
      };
      this.waiters.add(check);
      check();
    });
  }

  /** Resolves once host:port accepts TCP connections; fails if the process exits first. */
  async waitForPort(port: number, host = '127.0.0.1', timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!this.isRunning) throw this.failure(`exited before listening on ${host}:${port}`);
      if (await canConnect(host, port)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw this.failure(`did not listen on ${host}:${port}`);
  }

  /** Send a signal (default SIGTERM) without waiting. */
  signal(signal: NodeJS.Signals = 'SIGTERM'): void {
    if (this.isRunning) this.child.kill(signal);
  }

  /** SIGTERM, then SIGKILL if still running after the grace period; resolves on exit. */
  async stop(): Promise<ExitStatus> {
    if (this.isRunning) {
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), this.killGraceMs);
      const status = await this.exited;
      clearTimeout(timer);
      return status;
    }
    return this.exited;
  }

  private failure(what: string): Error {
    const tail = this.lines.slice(-40).join('\n');
    return new Error(`\`${this.description}\` ${what}. Its output:\n${tail}`);
  }
}

function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export function spawnProcess(
  command: string,
  args: readonly string[],
  options?: SpawnOptions,
): TestProcess {
  return new TestProcess(command, args, options);
}

/** `node bin/connect.js ...args`, the command users run. */
export function spawnConnect(args: readonly string[], options?: SpawnOptions): TestProcess {
  return new TestProcess(process.execPath, [options?.bin ?? connectBin, ...args], {
    ...options,
    env: { LOG_LEVEL: 'info', ...options?.env },
  });
}

/** A process for the current test, stopped at its end. */
export function useProcess(
  command: string,
  args: readonly string[],
  options?: SpawnOptions,
): TestProcess {
  const p = spawnProcess(command, args, options);
  onTestFinished(async () => {
    await p.stop();
  });
  return p;
}

/** A `connect` process for the current test, stopped at its end. */
export function useConnect(args: readonly string[], options?: SpawnOptions): TestProcess {
  const p = spawnConnect(args, options);
  onTestFinished(async () => {
    await p.stop();
  });
  return p;
}

/** Run a `connect` command to completion and return its status and output. */
export async function runConnect(
  args: readonly string[],
  options?: SpawnOptions,
): Promise<ExitStatus & { output: string[] }> {
  const p = useConnect(args, options);
  const status = await p.exited;
  return { ...status, output: p.output() };
}

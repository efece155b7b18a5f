/**
 * What a CLI command needs from its process, gathered so that tests can run a command
 * in-process (with their own output sinks, environment, signal source and broker
 * starter) and bin/connect.js runs it against the real process.
 */
import { EventEmitter } from 'node:events';
import { type BrokerOptions, type RunningBroker, startBroker } from '../broker/broker.ts';

export interface CliContext {
  /** Plain-text user messages; logs go through src/util/logger.ts. */
  out: (line: string) => void;
  err: (line: string) => void;
  env: Readonly<Record<string, string | undefined>>;
  /** Source of SIGINT/SIGTERM. */
  signals: EventEmitter;
  /** Ends the process at once (second signal, shutdown timeout). */
  forceExit: (code: number) => void;
  startBroker: (options: BrokerOptions) => Promise<RunningBroker>;
  shutdownTimeoutMs: number;
}

export function processContext(): CliContext {
  return {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    env: process.env,
    signals: process,
    forceExit: (code) => process.exit(code),
    startBroker,
    shutdownTimeoutMs: 30_000,
  };
}

/** A context for tests: captured lines, no real signals or exits unless given. */
export function capturedContext(overrides: Partial<CliContext> = {}): CliContext & {
  stdout: string[];
  stderr: string[];
} {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return {
    out: (line) => stdout.push(line),
    err: (line) => stderr.push(line),
    env: {},
    signals: new EventEmitter(),
    forceExit: (code) => {
      throw new Error(`forceExit(${code}) called`);
    },
    startBroker,
    shutdownTimeoutMs: 30_000,
    ...overrides,
    stdout,
    stderr,
  };
}

/** Exit codes of the `connect` command. */
export const EXIT_OK = 0;
/** A failure at run time, or a part that is not built yet. */
export const EXIT_FAILURE = 1;
/** Bad usage or bad configuration: nothing was started. */
export const EXIT_USAGE = 2;

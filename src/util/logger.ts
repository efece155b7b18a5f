/**
 * One root pino logger per process; every module takes a named child from it.
 * LOG_LEVEL sets the level (default info; tests default to warn so their output
 * stays readable). Levels of named loggers can be changed at run time, which is
 * what REST `/admin/loggers` uses.
 */
import { type Logger, pino } from 'pino';

export type { Logger };

const defaultLevel = process.env.LOG_LEVEL ?? (process.env.VITEST ? 'warn' : 'info');

export const rootLogger: Logger = pino({
  level: defaultLevel,
  base: { pid: process.pid },
  timestamp: pino.stdTimeFunctions.isoTime,
});

const named = new Map<string, Logger>();

/** A child logger named after a module or component, e.g. `broker.log.cleaner`. */
export function getLogger(name: string, bindings: Record<string, unknown> = {}): Logger {
  if (Object.keys(bindings).length > 0) return rootLogger.child({ logger: name, ...bindings });
  let logger = named.get(name);
  if (!logger) {
    logger = rootLogger.child({ logger: name });
    named.set(name, logger);
  }
  return logger;
}

/** Every named logger created so far, for the loggers admin endpoint. */
export function namedLoggers(): ReadonlyMap<string, Logger> {
  return named;
}

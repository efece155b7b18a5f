/**
 * One root pino logger per process; every module takes a named child from it.
 * LOG_LEVEL sets the level (default info; tests default to warn so their output
 * stays readable). Levels of named loggers can be changed at run time, which is
 * what REST `/admin/loggers` uses.
 */
import { isMainThread } from 'node:worker_threads';
import { type Logger, pino } from 'pino';
import pretty from 'pino-pretty';

export type { Logger };

const defaultLevel = process.env.LOG_LEVEL ?? (process.env.VITEST ? 'warn' : 'info');

export type LogFormat = 'auto' | 'json' | 'pretty';

/** JSON lines on stdout, as pino writes them by default. */
const jsonLines = pino.destination({ dest: 1, sync: true });

/**
 * Where every logger writes: JSON lines, or pino-pretty's readable lines for a person at
 * a terminal. Switched in place by configureLogging, so loggers made before the config
 * was read follow.
 */
let target: { write(line: string): unknown } = jsonLines;

/**
 * The target for a format, recorded in LOG_FORMAT (and LOG_COLORIZE) so that worker
 * threads started later (the embedded broker, encoders), whose stdout is no terminal,
 * log the way the main thread decided.
 */
function formatTarget(format: LogFormat): { write(line: string): unknown } {
  const readable =
    format === 'pretty' ||
    (format === 'auto' && process.stdout.isTTY === true && process.env.VITEST === undefined);
  const colorize = process.stdout.isTTY === true || process.env.LOG_COLORIZE === '1';
  if (isMainThread) {
    process.env.LOG_FORMAT = readable ? 'pretty' : 'json';
    if (readable && colorize) process.env.LOG_COLORIZE = '1';
  }
  if (!readable) return jsonLines;
  return pretty({
    colorize,
    sync: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname',
    messageKey: 'msg',
  });
}

export const rootLogger: Logger = pino(
  {
    level: defaultLevel,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
  },
  { write: (line: string) => target.write(line) },
);

target = formatTarget((process.env.LOG_FORMAT as LogFormat | undefined) ?? 'auto');

/**
 * Applies a command's log.level and log.format (src/config/logging-config.ts); keys
 * absent or null keep what LOG_LEVEL / LOG_FORMAT set.
 */
export function configureLogging(values: Readonly<Record<string, unknown>>): void {
  const level = values['log.level'];
  if (typeof level === 'string') {
    rootLogger.level = level;
    if (isMainThread) process.env.LOG_LEVEL = level;
  }
  const format = values['log.format'];
  if (typeof format === 'string') target = formatTarget(format as LogFormat);
}

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

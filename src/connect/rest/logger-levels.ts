/**
 * Run-time log levels for /admin/loggers, in Kafka Connect's terms over our pino loggers
 * (src/util/logger.ts): the root logger is `root`, named loggers are dotted names
 * (`connect.rest`), and a level set on a name applies to it and every logger below it
 * (`connect` covers `connect.rest`), the way log4j namespaces work. Levels are log4j's
 * names (TRACE, DEBUG, INFO, WARN, ERROR, FATAL, plus OFF and ALL), case-insensitive.
 *
 * `last_modified` is the epoch-ms time this worker last set the logger's level, null if
 * never (KIP-976). The clock is injected for tests. Used from the REST handlers only.
 */
import { getLogger, type Logger, namedLoggers, rootLogger } from '../../util/logger.ts';

export const ROOT_LOGGER = 'root';

export interface LoggerLevel {
  level: string;
  last_modified: number | null;
}

const log4jToPino: Record<string, string> = {
  ALL: 'trace',
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
  FATAL: 'fatal',
  OFF: 'silent',
};

/** The pino level for a log4j level name, or undefined if it is not one. */
export function pinoLevel(level: string): string | undefined {
  return log4jToPino[level.toUpperCase()];
}

function log4jLevel(logger: Logger): string {
  return logger.level === 'silent' ? 'OFF' : logger.level.toUpperCase();
}

export class LoggerLevels {
  private readonly modified = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Root and every named logger, sorted by name, root first. */
  all(): Record<string, LoggerLevel> {
    const out: Record<string, LoggerLevel> = { [ROOT_LOGGER]: this.entry(ROOT_LOGGER, rootLogger) };
    for (const name of [...namedLoggers().keys()].sort()) {
      out[name] = this.entry(name, namedLoggers().get(name) as Logger);
    }
    return out;
  }

  /** One logger's level, undefined if no logger has that name. */
  level(name: string): LoggerLevel | undefined {
    if (name === ROOT_LOGGER) return this.entry(name, rootLogger);
    const logger = namedLoggers().get(name);
    return logger === undefined ? undefined : this.entry(name, logger);
  }

  /**
   * Set `level` (a log4j name, already checked with pinoLevel) on `namespace` and every
   * logger below it, creating the namespace's own logger if needed; returns the names
   * changed, sorted.
   */
  setLevel(namespace: string, level: string): string[] {
    const target = pinoLevel(level);
    if (target === undefined) return [];
    const time = this.now();
    const affected: string[] = [];
    if (namespace === ROOT_LOGGER) {
      rootLogger.level = target;
      this.modified.set(ROOT_LOGGER, time);
      affected.push(ROOT_LOGGER);
    } else {
      getLogger(namespace);
    }
    for (const [name, logger] of namedLoggers()) {
      if (namespace === ROOT_LOGGER || name === namespace || name.startsWith(`${namespace}.`)) {
        logger.level = target;
        this.modified.set(name, time);
        affected.push(name);
      }
    }
    return affected.sort();
  }

  private entry(name: string, logger: Logger): LoggerLevel {
    return { level: log4jLevel(logger), last_modified: this.modified.get(name) ?? null };
  }
}

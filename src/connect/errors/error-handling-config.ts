/**
 * The `errors.*` keys of a connector config (defined in runtime/connector-config.ts),
 * read into the values the error handling uses. Config values arrive as the strings
 * the user gave; the connector config was validated before the task started.
 */
export interface ErrorHandlingConfig {
  /** 0: no retries; -1: retry forever. */
  readonly retryTimeoutMs: number;
  readonly retryDelayMaxMs: number;
  readonly toleranceAll: boolean;
  readonly logEnable: boolean;
  readonly logIncludeMessages: boolean;
  /** Empty: no dead letter queue. Sink connectors only. */
  readonly dlqTopic: string;
  readonly dlqReplicationFactor: number;
  readonly dlqContextHeaders: boolean;
}

function int(value: string | undefined, fallback: number): number {
  if (value === undefined || value.trim() === '') return fallback;
  const n = Number(value);
  return Number.isFinite(n) ? n : fallback;
}

function bool(value: string | undefined): boolean {
  return value?.trim().toLowerCase() === 'true';
}

export function errorHandlingConfig(config: Readonly<Record<string, string>>): ErrorHandlingConfig {
  return {
    retryTimeoutMs: int(config['errors.retry.timeout'], 0),
    retryDelayMaxMs: int(config['errors.retry.delay.max.ms'], 60_000),
    toleranceAll: config['errors.tolerance']?.trim().toLowerCase() === 'all',
    logEnable: bool(config['errors.log.enable']),
    logIncludeMessages: bool(config['errors.log.include.messages']),
    dlqTopic: (config['errors.deadletterqueue.topic.name'] ?? '').trim(),
    dlqReplicationFactor: int(config['errors.deadletterqueue.topic.replication.factor'], -1),
    dlqContextHeaders: bool(config['errors.deadletterqueue.context.headers.enable']),
  };
}

/**
 * The transaction coordinator's settings, by Kafka's broker key names and with
 * Kafka's defaults (src/config/broker-config.ts defines and checks them). They are read
 * from the broker's config record when present, else the default applies, for
 * embedders that pass a partial record.
 */

export interface TxnConfig {
  /** transaction.max.timeout.ms: the largest transaction.timeout.ms a producer may ask for. */
  maxTimeoutMs: number;
  /** transaction.state.log.num.partitions: fixed once __transaction_state exists. */
  stateLogPartitions: number;
  /** transaction.state.log.segment.bytes */
  stateLogSegmentBytes: number;
  /** transaction.abort.timed.out.transaction.cleanup.interval.ms */
  abortTimedOutIntervalMs: number;
  /** transactional.id.expiration.ms */
  idExpirationMs: number;
}

const DEFAULTS: Record<string, number> = {
  'transaction.max.timeout.ms': 900_000,
  'transaction.state.log.num.partitions': 50,
  'transaction.state.log.segment.bytes': 104_857_600,
  'transaction.abort.timed.out.transaction.cleanup.interval.ms': 10_000,
  'transactional.id.expiration.ms': 604_800_000,
};

export function txnConfigFrom(config: Readonly<Record<string, unknown>>): TxnConfig {
  const get = (key: string): number => {
    const v = config[key];
    if (v === undefined || v === null) return DEFAULTS[key]!;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1)
      throw new Error(`${key} must be a positive integer, not ${String(v)}`);
    return n;
  };
  return {
    maxTimeoutMs: get('transaction.max.timeout.ms'),
    stateLogPartitions: get('transaction.state.log.num.partitions'),
    stateLogSegmentBytes: get('transaction.state.log.segment.bytes'),
    abortTimedOutIntervalMs: get('transaction.abort.timed.out.transaction.cleanup.interval.ms'),
    idExpirationMs: get('transactional.id.expiration.ms'),
  };
}

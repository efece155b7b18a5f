/**
 * Keys of Debezium's Postgres connector (PostgresConnectorConfig,
 * RelationalDatabaseConnectorConfig, CommonConnectorConfig) that this connector does
 * not implement. Each is refused by validate() ("not supported: <key>; <what to do>"),
 * so a Debezium config that relies on one fails on create (HTTP 400) and on
 * /config/validate instead of running without it: a column.mask.with.12.chars that
 * is accepted and ignored sends the PII it was meant to hide.
 *
 * Keys implemented are the definitions of connector-config.ts; keys neither defines are
 * passed through untouched, as Kafka Connect does, and so are the keys every connector
 * has (name, connector.class, tasks.max, *.converter*, transforms.*, predicates.*,
 * errors.*, topic.creation.*, config.action.reload, producer/consumer/admin.override.*):
 * nothing here shares their prefixes. An entry with `accepts` lets through the value
 * that names what the connector does anyway (snapshot.isolation.mode=repeatable_read),
 * compared case-insensitively as Debezium compares enumerations.
 */
import type { ConfigError } from '../../../src/connect/api/index.ts';

interface UnsupportedKey {
  /** The key as documented; `<N>`, `<algo>`, `<salt>`, `<name>`, `*` stand for any text. */
  name: string;
  advice: string;
  /** The one value that asks for what the connector does anyway. */
  accepts?: string;
}

const NOT_YET = 'not supported yet';

/** Groups of keys; the comment on each says why they are refused. */
const GROUPS: ReadonlyArray<{ keys: UnsupportedKey[] }> = [
  {
    // Column transformations: ignoring them leaks or changes data without a trace.
    // (message.key.columns, column.mask.*, column.truncate.to.* are implemented:
    // message-key-columns.ts, column-mappers.ts; schema.name.adjustment.mode and
    // field.name.adjustment.mode: naming-config.ts.)
    keys: [
      {
        name: 'unavailable.value.placeholder',
        advice: `${NOT_YET}; unchanged TOASTed values are always __debezium_unavailable_value`,
      },
      { name: 'include.schema.comments', advice: NOT_YET, accepts: 'false' },
      { name: 'converters', advice: `${NOT_YET}; use a transform on the records instead` },
      { name: 'post.processors', advice: `${NOT_YET}; use a transform on the records instead` },
    ],
  },
  {
    // The snapshot reads REPEATABLE READ inside the slot's exported snapshot, in the
    // order of the captured tables (snapshot-reader.ts). (snapshot.mode and its
    // configuration_based keys, snapshot.include.collection.list,
    // snapshot.select.statement.overrides, snapshot.locking.mode, snapshot.lock.timeout.ms,
    // snapshot.delay.ms, snapshot.max.threads and streaming.delay.ms are implemented:
    // connector-config.ts.)
    keys: [
      ...[
        'snapshot.mode.custom.name',
        'snapshot.query.mode',
        'snapshot.query.mode.custom.name',
        'snapshot.locking.mode.custom.name',
      ].map((name) => ({
        name,
        advice: `${NOT_YET}; snapshot.mode is one of initial, initial_only, no_data, always, when_needed, configuration_based`,
      })),
      {
        name: 'snapshot.isolation.mode',
        advice: `${NOT_YET}; the snapshot reads REPEATABLE READ inside the slot's exported snapshot`,
        accepts: 'repeatable_read',
      },
      ...['snapshot.tables.order.by.row.count', 'snapshot.full.column.scan.force'].map((name) => ({
        name,
        advice: NOT_YET,
      })),
      // Incremental snapshots (incremental-snapshot.ts) write their watermarks as rows of
      // the signal table (incremental.snapshot.chunk.size is implemented).
      {
        name: 'incremental.snapshot.allow.schema.changes',
        advice: `${NOT_YET}; a schema change of a table during its incremental snapshot is not checked for`,
        accepts: 'false',
      },
    ],
  },
  {
    // Replication and connection options the stream and its connections do not apply.
    keys: [
      ...[
        'slot.stream.params',
        'slot.failover',
        'replica.identity.autoset.values',
        'xmin.fetch.interval.ms',
        'lsn.flush.timeout.ms',
        'lsn.flush.timeout.action',
        'offset.mismatch.strategy',
        'internal.slot.seek.to.known.offset.on.start',
        'internal.create.slot.command.timeout',
        'database.initial.statements',
        'database.query.timeout.ms',
        'database.tcpKeepAlive',
        'retriable.restart.connector.wait.ms',
        'query.fetch.size',
        'max.queue.size.in.bytes',
      ].map((name) => ({ name, advice: NOT_YET })),
      {
        name: 'lsn.flush.mode',
        advice: `${NOT_YET}; the connector confirms what Kafka holds`,
        accepts: 'connector',
      },
      {
        name: 'flush.lsn.source',
        advice: `${NOT_YET}; the connector confirms what Kafka holds`,
        accepts: 'true',
      },
      {
        name: 'schema.refresh.mode',
        advice: `${NOT_YET}; schemas follow every Relation message`,
        accepts: 'columns_diff',
      },
      {
        name: 'table.ignore.builtin',
        advice: `${NOT_YET}; system schemas are never captured`,
        accepts: 'true',
      },
      {
        name: 'event.processing.failure.handling.mode',
        advice: `${NOT_YET}; an event that cannot be built fails the task`,
        accepts: 'fail',
      },
      {
        name: 'database.sslfactory',
        advice:
          'a Java SSLSocketFactory class, which cannot load here; set database.sslrootcert, database.sslcert and database.sslkey instead',
      },
    ],
  },
  {
    // Notifications and metrics are fixed. (topic.naming.strategy,
    // topic.delimiter, topic.heartbeat.prefix, topic.cache.size are implemented:
    // naming-config.ts.)
    keys: [
      { name: 'transaction.metadata.factory', advice: NOT_YET },
      {
        name: 'source.info.struct.maker',
        advice: `${NOT_YET}; the source block is Debezium's Postgres one`,
      },
      // (The signal channels' keys, signal.* with signal.consumer.*, are implemented:
      // signals/signal-channels-config.ts refuses what they cannot do.)
      ...['notification.enabled.channels', 'notification.sink.topic.name'].map((name) => ({
        name,
        advice: `${NOT_YET}: the connector sends no notifications; incremental snapshot progress is in the task's log`,
      })),
      ...[
        'custom.metric.tags',
        'advanced.metrics.enable',
        'extended.headers.enabled',
        'openlineage.integration.*',
        'guardrail.collections.max',
        'guardrail.collections.limit.action',
      ].map((name) => ({ name, advice: NOT_YET })),
    ],
  },
  {
    // Debezium 1.x names, removed in 2.0: a config still using one would capture more
    // (or less) than it says.
    keys: [
      ['database.server.name', 'topic.prefix'],
      ['table.whitelist', 'table.include.list'],
      ['table.blacklist', 'table.exclude.list'],
      ['schema.whitelist', 'schema.include.list'],
      ['schema.blacklist', 'schema.exclude.list'],
      ['column.whitelist', 'column.include.list'],
      ['column.blacklist', 'column.exclude.list'],
    ].map(([name, now]) => ({ name, advice: `renamed ${now} in Debezium 2.0; use ${now}` })),
  },
  {
    // Still defined by Debezium 2.x but no longer read: its heartbeat topic follows
    // topic.heartbeat.prefix. Only the default, which changes nothing, is let through.
    keys: [
      {
        name: 'heartbeat.topics.prefix',
        advice:
          'Debezium 2.x names heartbeat topics by topic.heartbeat.prefix and ignores heartbeat.topics.prefix; set topic.heartbeat.prefix instead',
        accepts: '__debezium-heartbeat',
      },
    ],
  },
];

interface Matcher extends UnsupportedKey {
  test(key: string): boolean;
}

function matcher(k: UnsupportedKey): Matcher {
  if (!/<[a-zA-Z]+>|\*/.test(k.name)) return { ...k, test: (key) => key === k.name };
  const source = k.name
    .split(/(<[a-zA-Z]+>|\*)/)
    .map((part) =>
      part === '<N>'
        ? '\\d+'
        : part.startsWith('<') || part === '*'
          ? '.+'
          : part.replace(/[.]/g, '\\.'),
    )
    .join('');
  const re = new RegExp(`^${source}$`);
  return { ...k, test: (key) => re.test(key) };
}

const MATCHERS: readonly Matcher[] = GROUPS.flatMap((g) => g.keys.map(matcher));

/** Every refused key as documented (patterns with their placeholders). */
export const UNSUPPORTED_KEYS: readonly string[] = MATCHERS.map((m) => m.name);

/** One error per key of `values` that Debezium defines and this connector does not implement. */
export function unsupportedKeyErrors(values: Readonly<Record<string, unknown>>): ConfigError[] {
  const errors: ConfigError[] = [];
  for (const [key, value] of Object.entries(values)) {
    const m = MATCHERS.find((x) => x.test(key));
    if (!m) continue;
    const given = typeof value === 'string' ? value.trim().toLowerCase() : String(value);
    if (m.accepts !== undefined && given === m.accepts) continue;
    errors.push({ key, value, message: `not supported: ${key}; ${m.advice}` });
  }
  return errors;
}

/**
 * The connector's configuration, with Debezium's Postgres connector keys and defaults
 * so existing Debezium configs run unchanged. `postgresCdcConfigDefs` goes into the
 * plugin manifest (per-key parsing and /config/validate); `validateCombinations` is the
 * connector's cross-field check (the manifest's `validate`); `readSettings` turns parsed
 * values into the typed settings the task uses. Debezium keys without a definition here
 * are refused by the connector's validate (unsupported-keys.ts), and enumerations are
 * matched case-insensitively, as Debezium matches them.
 */
import {
  type AnyConfigDef,
  atLeast,
  type ConfigError,
  ConfigException,
  define,
  nonEmpty,
  type Validator,
} from '../../../src/connect/api/index.ts';
import { ColumnMappers } from './column-mappers.ts';
import { MessageKeyColumns, messageKeyColumnsProblem } from './message-key-columns.ts';
import { type EventNames, namingConfigDefs, readEventNames } from './naming-config.ts';
import type { PublicationMode } from './publication.ts';
import {
  readSignalChannels,
  type SignalChannelSettings,
  signalChannelConfigDefs,
  signalChannelErrors,
} from './signals/signal-channels-config.ts';
import { wholeMatch } from './source-type-parameters.ts';
import type { ConfigurationBasedSnapshot } from './start-plan.ts';
import type { FilterLists } from './table-filter.ts';
import type {
  BinaryHandlingMode,
  DecimalHandlingMode,
  HstoreHandlingMode,
  IntervalHandlingMode,
  MappingModes,
  TimePrecisionMode,
} from './type-mapping.ts';

export type SnapshotMode =
  | 'initial'
  | 'initial_only'
  | 'no_data'
  | 'always'
  | 'when_needed'
  | 'configuration_based';

const SNAPSHOT_MODES = [
  'initial',
  'initial_only',
  'no_data',
  // Debezium's deprecated name of no_data.
  'never',
  'always',
  'when_needed',
  'configuration_based',
];

/** An enumeration with one value Debezium defines that loads a Java class, refused with `why`. */
const oneOfOrJavaClass =
  (classValue: string, why: string, ...allowed: string[]): Validator<string> =>
  (v, name) =>
    v.toLowerCase() === classValue ? why : oneOf(...allowed)(v, name);

const JAVA_CLASS =
  'cannot run here: it names a Java class (with its *.custom.name key), and this connector loads no Java classes';

/**
 * An enumeration, matched case-insensitively as Debezium's EnumeratedValue.parse does
 * (snapshot.mode=INITIAL works); readSettings lower-cases the value.
 */
const oneOf =
  (...allowed: string[]): Validator<string> =>
  (v) =>
    allowed.includes(v.toLowerCase()) ? undefined : `must be one of ${allowed.join(', ')}`;

/** Like oneOf, for lists (skipped.operations=C,U as Debezium's Operation.forCode reads it). */
const eachOneOf =
  (...allowed: string[]): Validator<string[]> =>
  (v) => {
    const bad = v.filter((x) => !allowed.includes(x.toLowerCase()));
    return bad.length === 0
      ? undefined
      : `contains ${bad.join(', ')}; allowed values are ${allowed.join(', ')}`;
  };

const list = (name: string, doc: string) =>
  define<string[]>({ name, type: 'list', default: [], doc, group: 'Filters' });

export const postgresCdcConfigDefs: readonly AnyConfigDef[] = [
  define({
    name: 'database.hostname',
    type: 'string',
    validator: nonEmpty,
    importance: 'high',
    doc: 'Host name of the Postgres server.',
    group: 'Connection',
  }),
  define({
    name: 'database.port',
    type: 'int',
    default: 5432,
    validator: atLeast(1),
    doc: 'Port of the Postgres server.',
    group: 'Connection',
  }),
  define({
    name: 'database.user',
    type: 'string',
    validator: nonEmpty,
    importance: 'high',
    doc: 'User with REPLICATION and SELECT privileges.',
    group: 'Connection',
  }),
  define<string>({
    name: 'database.password',
    type: 'password',
    default: null,
    doc: 'Password of database.user.',
    group: 'Connection',
  }),
  define({
    name: 'database.dbname',
    type: 'string',
    validator: nonEmpty,
    importance: 'high',
    doc: 'Database to capture.',
    group: 'Connection',
  }),
  define({
    name: 'database.sslmode',
    type: 'string',
    default: 'prefer',
    validator: oneOf('disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'),
    doc: "TLS use, as libpq's sslmode: prefer tries TLS and falls back to plain only when the server has none; verify-ca checks the chain, verify-full the host name too.",
    group: 'Connection',
  }),
  define<string | null>({
    name: 'database.sslrootcert',
    type: 'string',
    default: null,
    defaultDoc: '~/.postgresql/root.crt',
    doc: "PEM file of the CAs the server's certificate is checked against (verify-ca, verify-full; require too when set), or system for the system's store.",
    group: 'Connection',
  }),
  define<string | null>({
    name: 'database.sslcert',
    type: 'string',
    default: null,
    doc: 'PEM file of a client certificate to present.',
    group: 'Connection',
  }),
  define<string | null>({
    name: 'database.sslkey',
    type: 'string',
    default: null,
    doc: "PEM file of the client certificate's private key.",
    group: 'Connection',
  }),
  define<string | null>({
    name: 'database.sslpassword',
    type: 'password',
    default: null,
    doc: 'Passphrase of database.sslkey.',
    group: 'Connection',
  }),
  define({
    name: 'topic.prefix',
    type: 'string',
    importance: 'high',
    validator: (v) =>
      /^[A-Za-z0-9._-]+$/.test(v)
        ? undefined
        : 'may contain only letters, digits, ".", "_" and "-"',
    doc: 'Logical server name: prefix of every topic and the source partition key.',
  }),
  list(
    'schema.include.list',
    'Regular expressions of schemas to capture (all but system schemas when empty).',
  ),
  list('schema.exclude.list', 'Regular expressions of schemas not to capture.'),
  list('table.include.list', 'Regular expressions of schema.table names to capture.'),
  list('table.exclude.list', 'Regular expressions of schema.table names not to capture.'),
  list(
    'column.include.list',
    'Regular expressions of schema.table.column names to include in events.',
  ),
  list(
    'column.exclude.list',
    'Regular expressions of schema.table.column names to leave out of events.',
  ),
  list(
    'message.prefix.include.list',
    'Regular expressions of the prefixes of logical decoding messages (pg_logical_emit_message; ' +
      'Postgres 14 and later) sent to <topic.prefix>.message, matched against the whole prefix in any ' +
      'case; all prefixes when empty. Not together with message.prefix.exclude.list.',
  ),
  list(
    'message.prefix.exclude.list',
    'Regular expressions of the prefixes of logical decoding messages not to send to <topic.prefix>.message.',
  ),
  define<string | null>({
    name: 'message.key.columns',
    type: 'string',
    default: null,
    validator: (v) => (v === null || v.trim() === '' ? undefined : messageKeyColumnsProblem(v)),
    doc:
      "The key columns of tables, as Debezium reads them: entries '<schema.table regex>:<column " +
      "regex>,<column regex>...' separated by ';', for example inventory.orders:id;public.(.*):tenant,id. " +
      'A table an entry matches is keyed by the matching columns, in the order written, instead of ' +
      'its primary key; a table without a primary key so gets a key (and a compacted topic). The ' +
      "table's replica identity must send those columns of old rows (REPLICA IDENTITY FULL, or an " +
      'identity over them), or the connector refuses to start: deletes would carry a wrong key.',
    group: 'Events',
  }),
  define({
    name: 'plugin.name',
    type: 'string',
    default: 'pgoutput',
    validator: oneOf('pgoutput'),
    doc: 'Logical decoding plugin; only pgoutput (built into Postgres 10+) is supported.',
    group: 'Replication',
  }),
  define({
    name: 'slot.name',
    type: 'string',
    default: 'debezium',
    validator: (v) =>
      /^[a-z0-9_]{1,63}$/.test(v)
        ? undefined
        : 'must be 1 to 63 lower-case letters, digits or underscores (a Postgres slot name)',
    doc: 'Replication slot the connector streams from.',
    group: 'Replication',
  }),
  define({
    name: 'slot.drop.on.stop',
    type: 'boolean',
    default: false,
    doc: 'Drop the slot when the connector stops (tests and demos only: changes made while stopped are lost).',
    group: 'Replication',
  }),
  define({
    name: 'slot.drop.on.delete',
    type: 'boolean',
    default: false,
    doc:
      'Drop the slot (once it is inactive) and, unless publication.autocreate.mode=disabled, the ' +
      'publication when the connector is deleted. When false they remain, and the slot keeps WAL ' +
      'on the server until it is dropped: the deletion is logged at WARN with the SQL to drop them.',
    group: 'Replication',
  }),
  define({
    name: 'slot.max.retries',
    type: 'int',
    default: 6,
    validator: atLeast(0),
    doc:
      'If connecting to the replication slot fails because another process holds it (the slot is ' +
      'active), how many more consecutive attempts are made before the task fails (Debezium: 6).',
    group: 'Replication',
  }),
  define({
    name: 'slot.retry.delay.ms',
    type: 'long',
    default: 10000,
    validator: atLeast(0),
    doc: 'Milliseconds between attempts to connect to a replication slot another process holds (Debezium: 10000).',
    group: 'Replication',
  }),
  define({
    name: 'errors.max.retries',
    type: 'int',
    default: -1,
    validator: atLeast(-1),
    doc:
      'How many consecutive retriable errors (a lost or refused connection) the task retries before ' +
      'it fails: -1 no limit, 0 fail at the first one, n > 0 fail after n retries. The count starts ' +
      'again once the task streams (Debezium: -1).',
    group: 'Replication',
  }),
  define({
    name: 'publication.name',
    type: 'string',
    default: 'dbz_publication',
    validator: nonEmpty,
    doc: 'Publication that selects the tables pgoutput sends.',
    group: 'Replication',
  }),
  define({
    name: 'publication.autocreate.mode',
    type: 'string',
    default: 'all_tables',
    validator: oneOf('all_tables', 'filtered', 'disabled'),
    doc: 'How the publication is created: all_tables, filtered (exactly the captured tables) or disabled (must exist).',
    group: 'Replication',
  }),
  define({
    name: 'publish.via.partition.root',
    type: 'boolean',
    default: false,
    doc:
      'PostgreSQL 13+: the publication is created or altered WITH (publish_via_partition_root), so ' +
      'a partitioned table is captured under its own name (the include lists match it, the snapshot ' +
      'reads it, its changes stream under its topic) instead of one table per partition.',
    group: 'Replication',
  }),
  define({
    name: 'snapshot.mode',
    type: 'string',
    default: 'initial',
    validator: oneOfOrJavaClass(
      'custom',
      `custom ${JAVA_CLASS}; use one of ${SNAPSHOT_MODES.join(', ')}`,
      ...SNAPSHOT_MODES,
    ),
    doc:
      'When to snapshot existing rows before streaming: initial (once, then stream), initial_only ' +
      '(once, never stream), no_data (never; never is its old name), always (at every start), ' +
      'when_needed (once, and again when the stored position is gone from the slot), ' +
      'configuration_based (as the snapshot.mode.configuration.based.* keys say). custom is refused. ' +
      'A connector stopped before its first snapshot handed on any record (every table empty, no ' +
      'change and no heartbeat since) has no offset to name its slot by: the slot it made is ' +
      'dropped at stop, and the next start takes the snapshot again.',
    group: 'Snapshot',
  }),
  ...(
    [
      ['snapshot.data', 'configuration_based: snapshot the tables at every start.'],
      ['start.stream', 'configuration_based: stream changes (after the snapshot, if any).'],
      [
        'snapshot.on.data.error',
        'configuration_based: snapshot again when the stored position can no longer be streamed from (the slot is gone or behind it).',
      ],
      [
        'snapshot.schema',
        'configuration_based: snapshot the schema. Postgres keeps no schema history, so this changes nothing (as in Debezium).',
      ],
      [
        'snapshot.on.schema.error',
        'configuration_based: recover the schema history by a snapshot. Postgres keeps no schema history, so this changes nothing (as in Debezium).',
      ],
    ] as const
  ).map(([name, doc]) =>
    define({
      name: `snapshot.mode.configuration.based.${name}`,
      type: 'boolean',
      default: false,
      doc,
      group: 'Snapshot',
    }),
  ),
  define<string[]>({
    name: 'snapshot.include.collection.list',
    type: 'list',
    default: [],
    doc: 'Regular expressions of schema.table names of the captured tables to snapshot (all captured tables when empty); the others are streamed only.',
    group: 'Snapshot',
  }),
  define<string[]>({
    name: 'snapshot.select.statement.overrides',
    type: 'list',
    default: [],
    doc:
      'schema.table names of tables the snapshot reads with a query of their own, given by the key ' +
      'snapshot.select.statement.overrides.<schema.table> (a SELECT on that table, for example ' +
      'with a WHERE clause). Its result columns are matched to the table columns by name; a column it ' +
      'does not return is null in the snapshot events.',
    group: 'Snapshot',
  }),
  define({
    name: 'snapshot.locking.mode',
    type: 'string',
    default: 'none',
    validator: oneOfOrJavaClass(
      'custom',
      `custom ${JAVA_CLASS}; use none or shared`,
      'none',
      'shared',
    ),
    doc:
      'Table locks of the snapshot: none (no LOCK TABLE: a table is locked only by its own read, ' +
      'from then to the end of the snapshot; a concurrent ALTER TABLE that drops a column of a ' +
      'table not read yet can fail the snapshot and the task, whose restart snapshots again) or shared ' +
      '(ACCESS SHARE on every table snapshotted, up front, within snapshot.lock.timeout.ms: writes ' +
      'go on, DDL on them waits).',
    group: 'Snapshot',
  }),
  define({
    name: 'snapshot.lock.timeout.ms',
    type: 'long',
    default: 10000,
    validator: atLeast(0),
    doc: 'With snapshot.locking.mode=shared, how long the snapshot waits for its locks before it fails (0: no limit).',
    group: 'Snapshot',
  }),
  define({
    name: 'snapshot.delay.ms',
    type: 'long',
    default: 0,
    validator: atLeast(0),
    doc: 'Milliseconds to wait before a snapshot starts (the slot and its exported snapshot are made first).',
    group: 'Snapshot',
  }),
  define({
    name: 'streaming.delay.ms',
    type: 'long',
    default: 0,
    validator: atLeast(0),
    doc: 'Milliseconds to wait before streaming starts, after the snapshot if there is one.',
    group: 'Snapshot',
  }),
  define({
    name: 'snapshot.fetch.size',
    type: 'int',
    default: 10240,
    validator: atLeast(1),
    doc: 'Rows read per round trip while snapshotting.',
    group: 'Snapshot',
  }),
  define({
    name: 'snapshot.max.threads',
    type: 'int',
    default: 1,
    validator: atLeast(1),
    doc:
      'Connections that read the tables of a snapshot (initial or blocking) in parallel, one table ' +
      'at a time each, all within the same exported snapshot.',
    group: 'Snapshot',
  }),
  define({
    name: 'incremental.snapshot.chunk.size',
    type: 'int',
    default: 1024,
    validator: atLeast(1),
    doc:
      'Rows an incremental snapshot (the execute-snapshot signal) reads per chunk, between its ' +
      'open and close watermarks; the chunk is held in memory until its close watermark streams.',
    group: 'Snapshot',
  }),
  define<boolean>({
    name: 'read.only',
    type: 'boolean',
    default: false,
    doc:
      'Incremental snapshots without writing to the database: no watermark rows; each chunk is ' +
      'read in a REPEATABLE READ transaction whose snapshot decides which streamed changes are ' +
      'newer than its reads, and its reads go out once the stream has passed the WAL position of ' +
      'that snapshot. signal.data.collection still names the signal table the source channel ' +
      'reads (signals may come from the kafka or file channel instead).',
    group: 'Snapshot',
  }),
  define<string>({
    name: 'incremental.snapshot.watermarking.strategy',
    type: 'string',
    default: 'insert_insert',
    validator: oneOf('insert_insert', 'insert_delete'),
    doc:
      "How an incremental snapshot's chunks are watermarked in signal.data.collection: " +
      'insert_insert (an open and a close row per chunk, both kept) or insert_delete (an open ' +
      'row per chunk, deleted as its close, so the table does not grow).',
    group: 'Snapshot',
  }),
  define<string>({
    name: 'signal.data.collection',
    type: 'string',
    default: null,
    validator: (v) =>
      /^[^.]+\.[^.]+$/.test(v) ? undefined : 'must name a table as <schema>.<table>',
    doc:
      'The signal table, <schema>.<table> with the columns id, type and data (text): rows ' +
      'inserted into it are signals (log, execute-snapshot, stop-snapshot, pause-snapshot, ' +
      'resume-snapshot), and incremental snapshots write their watermarks into it. It is ' +
      'captured, and added to a filtered publication, even when the include lists leave it out.',
    group: 'Signals',
  }),
  ...signalChannelConfigDefs,
  define({
    name: 'decimal.handling.mode',
    type: 'string',
    default: 'precise',
    validator: oneOf('precise', 'double', 'string'),
    doc:
      'How numeric columns are represented: precise (Connect Decimal, or Debezium ' +
      'VariableScaleDecimal without a scale; a NaN or infinity fails the task, as no ' +
      'Decimal can hold it), double (FLOAT64, NaN and infinities included) or string ' +
      '(STRING; NaN and infinities as NAN, POSITIVE_INFINITY, NEGATIVE_INFINITY).',
    group: 'Events',
  }),
  define({
    name: 'time.precision.mode',
    type: 'string',
    default: 'adaptive',
    validator: oneOf(
      'adaptive',
      'adaptive_time_microseconds',
      'connect',
      'isostring',
      'microseconds',
      'nanoseconds',
    ),
    doc:
      'How date, time and timestamp columns are represented (temporal-mapping.ts): adaptive ' +
      '(Debezium time types at the column precision), adaptive_time_microseconds (time as ' +
      'MicroTime), connect (Kafka Connect Date, Time, Timestamp in ms), isostring (ISO-8601 ' +
      'strings at UTC), microseconds (MicroTime, MicroTimestamp), nanoseconds (NanoTime, ' +
      "NanoTimestamp; timestamps outside 1677..2262 fail the task). Debezium's structured is " +
      'not supported.',
    group: 'Events',
  }),
  define({
    name: 'interval.handling.mode',
    type: 'string',
    default: 'numeric',
    validator: oneOf('numeric', 'string'),
    doc:
      'How interval columns are represented: numeric (io.debezium.time.MicroDuration, approximate ' +
      'microseconds with 365.25/12 days a month) or string (io.debezium.time.Interval, exact ' +
      "'P<y>Y<m>M<d>DT<h>H<m>M<s>S').",
    group: 'Events',
  }),
  define({
    name: 'binary.handling.mode',
    type: 'string',
    default: 'bytes',
    validator: oneOf('bytes', 'base64', 'base64-url-safe', 'hex'),
    doc:
      'How bytea columns (and columns sent by include.unknown.datatypes) are represented: bytes, ' +
      'or a base64, base64-url-safe or hex string.',
    group: 'Events',
  }),
  define({
    name: 'hstore.handling.mode',
    type: 'string',
    default: 'json',
    validator: oneOf('json', 'map'),
    doc: 'How hstore columns are represented: json (io.debezium.data.Json string) or map (MAP of strings).',
    group: 'Events',
  }),
  define({
    name: 'money.fraction.digits',
    type: 'int',
    default: 2,
    // Debezium reads the key as a Java short.
    validator: (v) => (v >= 0 && v <= 32767 ? undefined : 'must be between 0 and 32767'),
    doc:
      'Scale of the Decimal that money columns become with decimal.handling.mode=precise; values ' +
      'are rounded half up to it.',
    group: 'Events',
  }),
  define<string[]>({
    name: 'column.propagate.source.type',
    type: 'list',
    default: [],
    doc:
      'Regular expressions of schema.table.column names whose schemas carry the ' +
      '__debezium.source.column.type, .length, .scale and .name parameters.',
    group: 'Events',
  }),
  define<string[]>({
    name: 'datatype.propagate.source.type',
    type: 'list',
    default: [],
    doc:
      'Regular expressions of schema.table.typename (the type as pg_type names it: varchar, ' +
      'numeric, a domain) whose columns carry the __debezium.source.column.* parameters.',
    group: 'Events',
  }),
  define({
    name: 'include.unknown.datatypes',
    type: 'boolean',
    default: false,
    doc:
      'A captured column whose type the connector cannot map (multiranges, tsquery, pg_lsn, ' +
      "composite and unknown extension types, ...): true sends it as Postgres' text form of the " +
      'value, as BYTES (or a string, per binary.handling.mode), ' +
      'as Debezium does; false fails the connector and the task, naming the column, rather than ' +
      'leave it out of the events.',
    group: 'Events',
  }),
  define({
    name: 'tombstones.on.delete',
    type: 'boolean',
    default: true,
    doc: 'Follow each delete event with a tombstone so compaction removes the key.',
    group: 'Events',
  }),
  define({
    name: 'heartbeat.interval.ms',
    type: 'int',
    default: 0,
    validator: atLeast(0),
    doc: 'How often a heartbeat record is sent (0: never).',
    group: 'Events',
  }),
  define<string>({
    name: 'heartbeat.action.query',
    type: 'string',
    default: null,
    doc: 'Query run against the database on each heartbeat.',
    group: 'Events',
  }),
  define<string[]>({
    name: 'skipped.operations',
    type: 'list',
    default: ['t'],
    validator: eachOneOf('c', 'u', 'd', 't', 'none'),
    doc: 'Operations not emitted: c, u, d, t, or none.',
    group: 'Events',
  }),
  define({
    name: 'provide.transaction.metadata',
    type: 'boolean',
    default: false,
    doc: 'Send BEGIN and END events of each transaction to <topic.prefix>.<topic.transaction>, and add the transaction block to change events.',
    group: 'Events',
  }),
  define({
    name: 'topic.transaction',
    type: 'string',
    default: 'transaction',
    validator: (v) =>
      /^[A-Za-z0-9._-]+$/.test(v)
        ? undefined
        : 'may contain only letters, digits, ".", "_" and "-"',
    doc: 'Suffix of the transaction topic, <topic.prefix><topic.delimiter><topic.transaction> (provide.transaction.metadata).',
    group: 'Events',
  }),
  ...namingConfigDefs,
  // Smaller than Debezium's 2048 and 8192: the queue holds JavaScript objects, and the
  // fewer live while the young generation is collected, the less it costs. Streaming
  // 100k transactions (bench/cdc): 13.5-13.8 against 14.3-15.5 us of CPU per event,
  // 10-20 MB less peak RSS, the snapshot no slower. A config that sets max.batch.size
  // alone gets Debezium's ratio, so Debezium's 2048 gets its 8192.
  define({
    name: 'max.batch.size',
    type: 'int',
    default: 512,
    validator: atLeast(1),
    doc: 'Most records returned by one poll (Debezium: 2048).',
    group: 'Performance',
  }),
  define<number>({
    name: 'max.queue.size',
    type: 'int',
    default: null,
    validator: atLeast(1),
    doc: 'Records buffered before reading from Postgres pauses; by default 4 x max.batch.size (Debezium: 8192).',
    group: 'Performance',
  }),
  define({
    name: 'poll.interval.ms',
    type: 'int',
    default: 500,
    validator: atLeast(1),
    doc: 'How long a poll waits for records when the queue is empty.',
    group: 'Performance',
  }),
  define({
    name: 'status.update.interval.ms',
    type: 'int',
    default: 10000,
    validator: atLeast(1),
    doc: 'How often the flushed position is reported to Postgres unprompted.',
    group: 'Replication',
  }),
];

/** Cross-field checks, on values already typed by the definitions. */
export function validateCombinations(v: Readonly<Record<string, unknown>>): ConfigError[] {
  const errors: ConfigError[] = [];
  const nonEmptyList = (k: string) => Array.isArray(v[k]) && (v[k] as unknown[]).length > 0;
  for (const level of ['schema', 'table', 'column', 'message.prefix']) {
    if (nonEmptyList(`${level}.include.list`) && nonEmptyList(`${level}.exclude.list`)) {
      errors.push({
        key: `${level}.exclude.list`,
        value: v[`${level}.exclude.list`],
        message: `"${level}.include.list" is already set; use either the include or the exclude list, not both`,
      });
    }
  }
  for (const key of [
    'schema.include.list',
    'schema.exclude.list',
    'table.include.list',
    'table.exclude.list',
    'column.include.list',
    'column.exclude.list',
    'message.prefix.include.list',
    'message.prefix.exclude.list',
    'column.propagate.source.type',
    'datatype.propagate.source.type',
  ]) {
    for (const pattern of (v[key] as string[] | undefined) ?? []) {
      try {
        new RegExp(pattern);
      } catch {
        errors.push({
          key,
          value: pattern,
          message: `"${pattern}" is not a valid regular expression`,
        });
      }
    }
  }
  errors.push(...ColumnMappers.fromConfig(v).errors);
  errors.push(...selectOverrides(v).errors);
  errors.push(...signalChannelErrors(v));
  const include = (v['snapshot.include.collection.list'] as string[] | undefined) ?? [];
  for (const pattern of include) {
    try {
      new RegExp(pattern);
    } catch {
      errors.push({
        key: 'snapshot.include.collection.list',
        value: pattern,
        message: `"${pattern}" is not a valid regular expression`,
      });
    }
  }
  const queueSize = v['max.queue.size'] as number | null;
  if (queueSize !== null && queueSize <= (v['max.batch.size'] as number)) {
    errors.push({
      key: 'max.queue.size',
      value: v['max.queue.size'],
      message: 'must be larger than max.batch.size',
    });
  }
  if (v['heartbeat.action.query'] && (v['heartbeat.interval.ms'] as number) === 0) {
    errors.push({
      key: 'heartbeat.action.query',
      value: v['heartbeat.action.query'],
      message: 'needs heartbeat.interval.ms above 0 to ever run',
    });
  }
  const skipped = ((v['skipped.operations'] as string[] | undefined) ?? []).map((o) =>
    o.toLowerCase(),
  );
  if (skipped.includes('none') && skipped.length > 1) {
    errors.push({
      key: 'skipped.operations',
      value: skipped,
      message: '"none" cannot be combined with other operations',
    });
  }
  return errors;
}

const OVERRIDE_PREFIX = 'snapshot.select.statement.overrides.';

/**
 * The snapshot's own queries per table (schema.table), from
 * snapshot.select.statement.overrides and its per-table keys. A listed table without a
 * statement, or a statement for a table not listed, is an error: Debezium would read
 * the whole table, or ignore the statement, without a word.
 */
export function selectOverrides(v: Readonly<Record<string, unknown>>): {
  statements: Map<string, string>;
  errors: ConfigError[];
} {
  const listed = ((v['snapshot.select.statement.overrides'] as string[] | undefined) ?? []).map(
    (t) => t.trim(),
  );
  const statements = new Map<string, string>();
  const errors: ConfigError[] = [];
  for (const table of listed) {
    const statement = v[OVERRIDE_PREFIX + table];
    if (typeof statement !== 'string' || statement.trim() === '') {
      errors.push({
        key: 'snapshot.select.statement.overrides',
        value: listed,
        message: `lists ${table} but ${OVERRIDE_PREFIX}${table} gives no SELECT statement for it`,
      });
      continue;
    }
    statements.set(table, statement.trim().replace(/;\s*$/, ''));
  }
  for (const key of Object.keys(v)) {
    if (!key.startsWith(OVERRIDE_PREFIX)) continue;
    const table = key.slice(OVERRIDE_PREFIX.length);
    if (!listed.includes(table))
      errors.push({
        key,
        value: v[key],
        message: `is not used: add ${table} to snapshot.select.statement.overrides`,
      });
  }
  return { statements, errors };
}

/** What the snapshot reader needs of the snapshot.* keys. */
export interface SnapshotReadSettings {
  /** snapshot.include.collection.list; every captured table when empty. */
  include: string[];
  /** snapshot.select.statement.overrides: the SELECT per schema.table. */
  selectOverrides: ReadonlyMap<string, string>;
  locking: 'none' | 'shared';
  lockTimeoutMs: number;
  delayMs: number;
  /** snapshot.max.threads: connections reading tables in parallel (1 when absent). */
  maxThreads?: number;
}

/** incremental.snapshot.watermarking.strategy (Debezium's values). */
export type WatermarkingStrategy = 'insert_insert' | 'insert_delete';

export interface PostgresCdcSettings {
  connection: {
    host: string;
    port: number;
    user: string;
    password: string | undefined;
    database: string;
    sslmode: string;
    sslrootcert: string | null;
    sslcert: string | null;
    sslkey: string | null;
    sslpassword: string | null;
  };
  topicPrefix: string;
  filters: FilterLists;
  /** message.prefix.include.list / exclude.list, as written. */
  messagePrefixes: { include: string[]; exclude: string[] };
  slotName: string;
  slotDropOnStop: boolean;
  slotDropOnDelete: boolean;
  slotMaxRetries: number;
  slotRetryDelayMs: number;
  /** errors.max.retries: -1 for no limit. */
  errorsMaxRetries: number;
  publicationName: string;
  publicationMode: PublicationMode;
  /** publish.via.partition.root: partitioned tables are captured as one table (publication.ts). */
  publishViaPartitionRoot: boolean;
  snapshotMode: SnapshotMode;
  snapshotConfigurationBased: ConfigurationBasedSnapshot;
  snapshot: SnapshotReadSettings;
  streamingDelayMs: number;
  snapshotFetchSize: number;
  /** incremental.snapshot.chunk.size. */
  incrementalChunkSize: number;
  /** incremental.snapshot.watermarking.strategy. */
  watermarking: WatermarkingStrategy;
  /** read.only: incremental snapshots write no watermarks. */
  readOnly: boolean;
  /** signal.data.collection, when set (the source signal channel). */
  signalTable: { schema: string; table: string } | null;
  /** signal.enabled.channels and the kafka and file channels' keys. */
  signalChannels: SignalChannelSettings;
  decimalHandlingMode: DecimalHandlingMode;
  timePrecisionMode: TimePrecisionMode;
  intervalHandlingMode: IntervalHandlingMode;
  binaryHandlingMode: BinaryHandlingMode;
  hstoreHandlingMode: HstoreHandlingMode;
  moneyFractionDigits: number;
  /** column.propagate.source.type / datatype.propagate.source.type, as written. */
  propagateSourceType: { columns: string[]; datatypes: string[] };
  includeUnknownDatatypes: boolean;
  tombstonesOnDelete: boolean;
  heartbeatIntervalMs: number;
  heartbeatActionQuery: string | null;
  skippedOperations: Set<string>;
  provideTransactionMetadata: boolean;
  /** topic.transaction: the transaction topic is names.topics.transactionTopic(). */
  topicTransaction: string;
  /** Topic, schema and field names (naming-config.ts), one per task. */
  names: EventNames;
  maxBatchSize: number;
  maxQueueSize: number;
  pollIntervalMs: number;
  statusUpdateIntervalMs: number;
  /** message.key.columns. */
  messageKeyColumns: MessageKeyColumns;
  /** column.mask.*, column.truncate.to.*. */
  columnMappers: ColumnMappers;
  /**
   * The `topic.creation.*` keys as the user wrote them (not the plugin's defaults):
   * where they ask for compaction, a table without a key cannot be captured.
   */
  topicCreation: Readonly<Record<string, string>>;
}

/** Typed settings from values parsed by postgresCdcConfigDefs. */
export function readSettings(v: Readonly<Record<string, unknown>>): PostgresCdcSettings {
  const s = (k: string) => v[k] as string;
  /** Enumerations (oneOf above): the canonical lower-case spelling. */
  const e = (k: string) => s(k).toLowerCase();
  const n = (k: string) => v[k] as number;
  const l = (k: string) => v[k] as string[];
  const mappers = ColumnMappers.fromConfig(v);
  // The connector and the task start from here without validate(): a mask that cannot
  // work must stop them rather than let the values through.
  const overrides = selectOverrides(v);
  const channels = signalChannelErrors(v);
  if (mappers.errors.length + overrides.errors.length + channels.length > 0)
    throw new ConfigException([...mappers.errors, ...overrides.errors, ...channels]);
  return {
    connection: {
      host: s('database.hostname'),
      port: n('database.port'),
      user: s('database.user'),
      password: (v['database.password'] as string | null) ?? undefined,
      database: s('database.dbname'),
      sslmode: e('database.sslmode'),
      sslrootcert: (v['database.sslrootcert'] as string | null) ?? null,
      sslcert: (v['database.sslcert'] as string | null) ?? null,
      sslkey: (v['database.sslkey'] as string | null) ?? null,
      sslpassword: (v['database.sslpassword'] as string | null) ?? null,
    },
    topicPrefix: s('topic.prefix'),
    filters: {
      schemaInclude: l('schema.include.list'),
      schemaExclude: l('schema.exclude.list'),
      tableInclude: l('table.include.list'),
      tableExclude: l('table.exclude.list'),
      columnInclude: l('column.include.list'),
      columnExclude: l('column.exclude.list'),
    },
    messagePrefixes: {
      include: l('message.prefix.include.list'),
      exclude: l('message.prefix.exclude.list'),
    },
    slotName: s('slot.name'),
    slotDropOnStop: v['slot.drop.on.stop'] as boolean,
    slotDropOnDelete: v['slot.drop.on.delete'] as boolean,
    slotMaxRetries: n('slot.max.retries'),
    slotRetryDelayMs: n('slot.retry.delay.ms'),
    errorsMaxRetries: n('errors.max.retries'),
    publicationName: s('publication.name'),
    publicationMode: e('publication.autocreate.mode') as PublicationMode,
    publishViaPartitionRoot: v['publish.via.partition.root'] as boolean,
    snapshotMode: (e('snapshot.mode') === 'never' ? 'no_data' : e('snapshot.mode')) as SnapshotMode,
    snapshotConfigurationBased: {
      snapshotData: v['snapshot.mode.configuration.based.snapshot.data'] as boolean,
      stream: v['snapshot.mode.configuration.based.start.stream'] as boolean,
      snapshotOnDataError: v['snapshot.mode.configuration.based.snapshot.on.data.error'] as boolean,
    },
    snapshot: {
      include: l('snapshot.include.collection.list'),
      selectOverrides: overrides.statements,
      locking: e('snapshot.locking.mode') as 'none' | 'shared',
      lockTimeoutMs: n('snapshot.lock.timeout.ms'),
      delayMs: n('snapshot.delay.ms'),
      maxThreads: n('snapshot.max.threads'),
    },
    streamingDelayMs: n('streaming.delay.ms'),
    snapshotFetchSize: n('snapshot.fetch.size'),
    incrementalChunkSize: n('incremental.snapshot.chunk.size'),
    watermarking: e('incremental.snapshot.watermarking.strategy') as WatermarkingStrategy,
    readOnly: v['read.only'] as boolean,
    signalTable: signalTable(v['signal.data.collection'] as string | null),
    signalChannels: readSignalChannels(v, s('topic.prefix')),
    decimalHandlingMode: e('decimal.handling.mode') as DecimalHandlingMode,
    timePrecisionMode: e('time.precision.mode') as TimePrecisionMode,
    intervalHandlingMode: e('interval.handling.mode') as IntervalHandlingMode,
    binaryHandlingMode: e('binary.handling.mode') as BinaryHandlingMode,
    hstoreHandlingMode: e('hstore.handling.mode') as HstoreHandlingMode,
    moneyFractionDigits: n('money.fraction.digits'),
    propagateSourceType: {
      columns: l('column.propagate.source.type'),
      datatypes: l('datatype.propagate.source.type'),
    },
    includeUnknownDatatypes: v['include.unknown.datatypes'] as boolean,
    tombstonesOnDelete: v['tombstones.on.delete'] as boolean,
    heartbeatIntervalMs: n('heartbeat.interval.ms'),
    heartbeatActionQuery: (v['heartbeat.action.query'] as string | null) ?? null,
    skippedOperations: new Set(
      l('skipped.operations')
        .map((o) => o.toLowerCase())
        .filter((o) => o !== 'none'),
    ),
    provideTransactionMetadata: v['provide.transaction.metadata'] as boolean,
    topicTransaction: s('topic.transaction'),
    names: readEventNames(v),
    maxBatchSize: n('max.batch.size'),
    maxQueueSize: (v['max.queue.size'] as number | null) ?? 4 * n('max.batch.size'),
    pollIntervalMs: n('poll.interval.ms'),
    statusUpdateIntervalMs: n('status.update.interval.ms'),
    messageKeyColumns: new MessageKeyColumns((v['message.key.columns'] as string | null) ?? null),
    columnMappers: mappers.mappers,
    topicCreation: Object.fromEntries(
      Object.entries(v).filter(
        (e): e is [string, string] =>
          e[0].startsWith('topic.creation.') && typeof e[1] === 'string',
      ),
    ),
  };
}

/** signal.data.collection as a table id (its validator made sure it is schema.table). */
function signalTable(name: string | null): { schema: string; table: string } | null {
  if (name === null) return null;
  const [schema, table] = name.split('.');
  return { schema, table };
}

/** The column mapping modes of the settings (type-mapping.ts), for the task's schemas. */
export function mappingModes(s: PostgresCdcSettings): MappingModes {
  return {
    decimalHandlingMode: s.decimalHandlingMode,
    timePrecisionMode: s.timePrecisionMode,
    includeUnknownDatatypes: s.includeUnknownDatatypes,
    intervalHandlingMode: s.intervalHandlingMode,
    binaryHandlingMode: s.binaryHandlingMode,
    hstoreHandlingMode: s.hstoreHandlingMode,
    moneyFractionDigits: s.moneyFractionDigits,
    messageKeyColumns: s.messageKeyColumns.isEmpty ? undefined : s.messageKeyColumns,
    columnMappers: s.columnMappers.isEmpty ? undefined : s.columnMappers,
    names: s.names,
    propagateSourceType:
      s.propagateSourceType.columns.length + s.propagateSourceType.datatypes.length === 0
        ? undefined
        : {
            columns: s.propagateSourceType.columns.map(wholeMatch),
            datatypes: s.propagateSourceType.datatypes.map(wholeMatch),
          },
  };
}

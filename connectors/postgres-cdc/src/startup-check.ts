/**
 * The connector's start-up check: connect as the configured user and verify what
 * streaming will need, so a misconfiguration fails the connector at once with a
 * message saying what to fix, instead of failing a task later with a raw SQL error.
 *
 * Checked, in order (each stops the check, since later ones depend on it):
 *   unreachable       TCP connection refused, host unknown or timed out
 *   authentication    password or pg_hba rejected the user
 *   database-missing  database.dbname does not exist
 *   wal-level         wal_level is not logical
 *   messages-unavailable  message.prefix.include.list / exclude.list set on a server
 *                     older than 14, which sends no logical decoding messages
 *   publication       publish.via.partition.root on a server older than 13
 *   replication-privilege  the user is neither superuser nor has REPLICATION
 *   missing-table     a table.include.list entry matches no table, or nothing is captured
 *   select-privilege  the user cannot SELECT a captured table
 *   unknown-datatype  a captured column's type has no mapping and
 *                     include.unknown.datatypes is false (unknown-datatypes.ts)
 *   publication       the publication cannot be created or used as configured
 *   keyless-compacted a captured table has no key and the user's topic.creation.* keys
 *                     make its topic compacted (keyless-tables.ts)
 *   key-outside-identity  message.key.columns keys a table by columns its replica
 *                     identity does not send of old rows (key-identity.ts)
 * Opens one connection and closes it before returning, whatever happens.
 */
import pg from 'pg';
import { ConnectException } from '../../../src/connect/api/index.ts';
import type { PostgresCdcSettings } from './connector-config.ts';
import { keyOutsideIdentityError } from './key-identity.ts';
import { keylessCompactedError, keylessTables } from './keyless-tables.ts';
import { messagePrefixProblem } from './logical-decoding-message.ts';
import { publicationExists } from './publication.ts';
import { TableFilter, type TableId } from './table-filter.ts';
import { negotiateTls, sslOption } from './tls.ts';
import { TypeRegistry } from './type-registry.ts';
import { unknownDatatypeMessage, unmappedColumns } from './unknown-datatypes.ts';

export type StartupProblem =
  | 'unreachable'
  | 'authentication'
  | 'database-missing'
  | 'wal-level'
  | 'messages-unavailable'
  | 'replication-privilege'
  | 'missing-table'
  | 'select-privilege'
  | 'unknown-datatype'
  | 'publication'
  | 'keyless-compacted'
  | 'key-outside-identity'
  | 'tls';

export class StartupCheckError extends ConnectException {
  constructor(
    readonly problem: StartupProblem,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'StartupCheckError';
  }
}

/** The ClientConfig for the settings' connection (TLS per database.sslmode). */
export function clientConfig(s: PostgresCdcSettings): pg.ClientConfig {
  const c = s.connection;
  const ssl = sslOption(c);
  return {
    host: c.host,
    port: c.port,
    user: c.user,
    password: c.password,
    database: c.database,
    ssl,
    // An unreachable host must fail the check, not hang it.
    connectionTimeoutMillis: 10_000,
  };
}

/**
 * Tables in the database the filter captures, under the names pgoutput gives their
 * changes: with publish.via.partition.root, ordinary tables and the roots of partitioned
 * tables (a partition's rows are its root's: the snapshot reads them through it, the
 * filter matches the root's name); without, ordinary tables and partitions, each
 * under its own name, and no partitioned table (it holds no rows of its own, so
 * reading it too would read every row twice).
 */
export async function capturedTables(
  client: pg.Client,
  filter: TableFilter,
  viaPartitionRoot: boolean,
): Promise<TableId[]> {
  const which = viaPartitionRoot
    ? `c.relkind IN ('r', 'p') AND NOT c.relispartition`
    : `c.relkind = 'r'`;
  const result = await client.query<{ schema: string; table: string }>(
    `SELECT n.nspname AS schema, c.relname AS table FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE ${which}
      ORDER BY 1, 2`,
  );
  return result.rows.filter((t) => filter.includesTable(t));
}

/** publish.via.partition.root needs the publication option PostgreSQL 13 brought. */
const PARTITION_ROOT_MIN_VERSION = 130000;

/** What the checks found: the captured tables, and those of them without a key. */
export interface DatabaseCheck {
  tables: TableId[];
  keyless: TableId[];
}

export async function checkDatabase(s: PostgresCdcSettings): Promise<DatabaseCheck> {
  const c = s.connection;
  const where = `${c.host}:${c.port}`;
  let client: pg.Client;
  try {
    await negotiateTls(s.connection, clientConfig(s));
    client = new pg.Client(clientConfig(s));
    client.on('error', () => undefined);
  } catch (error) {
    throw connectError(error, s, where);
  }
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    throw connectError(error, s, where);
  }
  try {
    const wal = (await client.query('SHOW wal_level')).rows[0].wal_level as string;
    if (wal !== 'logical')
      throw new StartupCheckError(
        'wal-level',
        `Postgres at ${where} has wal_level=${wal}; change data capture needs wal_level=logical: ` +
          'run ALTER SYSTEM SET wal_level = logical (or set it in postgresql.conf) and restart Postgres',
      );
    const version = (
      await client.query<{ v: string }>("SELECT current_setting('server_version_num') AS v")
    ).rows[0]?.v;
    const messages = messagePrefixProblem(Number(version), s.messagePrefixes);
    if (messages) throw new StartupCheckError('messages-unavailable', messages);
    if (s.publishViaPartitionRoot && Number(version) < PARTITION_ROOT_MIN_VERSION)
      throw new StartupCheckError(
        'publication',
        `publish.via.partition.root needs PostgreSQL 13 or later, and the server at ${where} is version ${version}: ` +
          'set publish.via.partition.root to false (each partition is then captured as a table of its own)',
      );
    const role = (
      await client.query(
        'SELECT rolsuper, rolreplication FROM pg_roles WHERE rolname = current_user',
      )
    ).rows[0] as { rolsuper: boolean; rolreplication: boolean };
    if (!role.rolsuper && !role.rolreplication)
      throw new StartupCheckError(
        'replication-privilege',
        `User '${c.user}' may not use replication slots: run ALTER ROLE ${client.escapeIdentifier(c.user)} REPLICATION ` +
          '(or connect as a superuser)',
      );
    const filter = new TableFilter(s.filters);
    const tables = await capturedTables(client, filter, s.publishViaPartitionRoot);
    const names = tables.map((t) => `${t.schema}.${t.table}`);
    const unmatched = s.filters.tableInclude.filter(
      (p) => !names.some((n) => new RegExp(`^(?:${p})$`, 'i').test(n)),
    );
    if (unmatched.length > 0)
      throw new StartupCheckError(
        'missing-table',
        `table.include.list entries ${unmatched.map((p) => `'${p}'`).join(', ')} match no table in database '${c.database}': ` +
          'create the tables or correct table.include.list (names are schema.table)',
      );
    if (tables.length === 0)
      throw new StartupCheckError(
        'missing-table',
        `No table in database '${c.database}' matches the schema/table include and exclude lists: nothing would be captured`,
      );
    const denied = (
      await client.query<{ name: string }>(
        `SELECT name FROM unnest($1::text[], $2::text[]) AS t(schema, tbl), LATERAL (SELECT quote_ident(schema) || '.' || quote_ident(tbl) AS name) q
          WHERE NOT has_table_privilege(current_user, name, 'SELECT')`,
        [tables.map((t) => t.schema), tables.map((t) => t.table)],
      )
    ).rows.map((r) => r.name);
    if (denied.length > 0)
      throw new StartupCheckError(
        'select-privilege',
        `User '${c.user}' lacks SELECT on ${denied.join(', ')}: run GRANT SELECT ON ${denied.join(', ')} TO ${client.escapeIdentifier(c.user)}`,
      );
    if (!s.includeUnknownDatatypes) {
      const unmapped = await unmappedColumns(client, new TypeRegistry(client), tables, filter, {
        decimalHandlingMode: s.decimalHandlingMode,
        timePrecisionMode: s.timePrecisionMode,
      });
      if (unmapped.length > 0)
        throw new StartupCheckError('unknown-datatype', unknownDatatypeMessage(unmapped));
    }
    const exists = await publicationExists(client, s.publicationName);
    if (!exists && s.publicationMode === 'disabled')
      throw new StartupCheckError(
        'publication',
        `Publication '${s.publicationName}' does not exist and publication.autocreate.mode is disabled: ` +
          'create it (CREATE PUBLICATION ... FOR TABLE ...) or set publication.autocreate.mode to filtered',
      );
    if (!exists && s.publicationMode === 'all_tables' && !role.rolsuper)
      throw new StartupCheckError(
        'publication',
        `Creating publication '${s.publicationName}' FOR ALL TABLES needs a superuser and '${c.user}' is not one: ` +
          'create the publication as a superuser, or set publication.autocreate.mode to filtered (the user must own the tables)',
      );
    const keyless = await keylessTables(client, tables, filter, s.messageKeyColumns);
    const compacted = keylessCompactedError(s.names.topics, keyless, s.topicCreation);
    if (compacted !== null) throw new StartupCheckError('keyless-compacted', compacted);
    const outside = await keyOutsideIdentityError(client, tables, filter, s.messageKeyColumns);
    if (outside !== null) throw new StartupCheckError('key-outside-identity', outside);
    return { tables, keyless };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A failure of the TLS handshake or of the server certificate's checks, or no TLS on the server. */
function isTlsFailure(e: { code?: string; message?: string }): boolean {
  return (
    /^ERR_TLS|CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|^ERR_SSL/.test(e.code ?? '') ||
    /does not support SSL|database\.ssl/.test(e.message ?? '')
  );
}

function connectError(error: unknown, s: PostgresCdcSettings, where: string): StartupCheckError {
  const e = error as { code?: string; message?: string };
  const detail = e.message ?? String(error);
  const user = s.connection.user;
  switch (e.code) {
    case '28P01':
      return new StartupCheckError(
        'authentication',
        `Postgres at ${where} rejected the password of user '${user}': check database.user and database.password`,
        { cause: error },
      );
    case '28000':
      return new StartupCheckError(
        'authentication',
        `Postgres at ${where} refused user '${user}' (${detail}): allow it in pg_hba.conf or check database.user`,
        { cause: error },
      );
    case '3D000':
      return new StartupCheckError(
        'database-missing',
        `Database '${s.connection.database}' does not exist on ${where}: create it or correct database.dbname`,
        { cause: error },
      );
    default:
      if (isTlsFailure(e))
        return new StartupCheckError(
          'tls',
          `TLS to Postgres at ${where} failed under database.sslmode=${s.connection.sslmode} (${e.code ? `${e.code}: ` : ''}${detail}): ` +
            'check database.sslrootcert (the CA that signed the server certificate), the host name the certificate names (verify-full), or the sslmode',
          { cause: error },
        );
      return new StartupCheckError(
        'unreachable',
        `Cannot connect to Postgres at ${where} (${e.code ?? detail}): check database.hostname and database.port, ` +
          'and that the server is running and accepts TCP connections from this worker',
        { cause: error },
      );
  }
}

/**
 * What the connector keeps in Postgres, for the `external` part of its REST status
 * (the connector's `externalState` hook): the replication slot (whether it exists,
 * who holds it, how much WAL it retains, how far its reader is behind) and the
 * publication. The slot matters most when nothing reads it: a STOPPED, FAILED or
 * paused connector's slot keeps every byte of WAL from its restart_lsn on, and this is
 * where a user sees that happen before the disk fills.
 *
 * One short-lived connection, read-only queries.
 */
import pg from 'pg';
import type { PostgresCdcSettings } from './connector-config.ts';
import { publicationExists } from './publication.ts';
import { SLOT_USAGE_COLUMNS, SLOT_USAGE_FROM, usageFromRow } from './slot-usage.ts';
import { clientConfig } from './startup-check.ts';
import { negotiateTls } from './tls.ts';

/** Below the runtime's wait for the hook, so an unreachable server reads as such. */
const CONNECT_TIMEOUT_MS = 3_000;

export async function readExternalState(s: PostgresCdcSettings): Promise<Record<string, unknown>> {
  const config = () => ({ ...clientConfig(s), connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  await negotiateTls(s.connection, config());
  const client = new pg.Client(config());
  client.on('error', () => undefined);
  try {
    await client.connect();
    const result = await client.query(
      `SELECT ${SLOT_USAGE_COLUMNS}, s.database, s.restart_lsn::text AS restart_lsn,
              s.confirmed_flush_lsn::text AS confirmed_flush_lsn, s.wal_status
         FROM ${SLOT_USAGE_FROM}`,
      [s.slotName],
    );
    const row = result.rows[0] as Record<string, unknown> | undefined;
    const managed = s.publicationMode !== 'disabled';
    return {
      replication_slot: row === undefined ? { name: s.slotName, exists: false } : slotState(s, row),
      publication: {
        name: s.publicationName,
        exists: await publicationExists(client, s.publicationName),
        managed_by_connector: managed,
      },
    };
  } finally {
    await client.end().catch(() => undefined);
  }
}

function slotState(s: PostgresCdcSettings, row: Record<string, unknown>): Record<string, unknown> {
  const usage = usageFromRow(row);
  return {
    name: s.slotName,
    exists: true,
    database: row.database,
    active: usage.active,
    holder:
      usage.holder === null
        ? null
        : {
            pid: usage.holder.pid,
            application_name: usage.holder.applicationName,
            client_addr: usage.holder.clientAddr,
          },
    restart_lsn: row.restart_lsn ?? null,
    confirmed_flush_lsn: row.confirmed_flush_lsn ?? null,
    retained_wal_bytes: usage.retainedBytes,
    retained_wal: usage.retainedPretty,
    lag_bytes: usage.lagBytes,
    wal_status: row.wal_status ?? null,
  };
}

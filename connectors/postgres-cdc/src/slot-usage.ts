/**
 * Who holds a replication slot and how much WAL it keeps, as Postgres tells it
 * (pg_replication_slots joined with pg_stat_activity on active_pid), and how that reads
 * in messages: a refused or retried slot names its holder's pid and application_name,
 * and every retry says how much WAL the slot retains meanwhile. Read-only queries.
 */
import pg from 'pg';

/**
 * Who holds a slot and how much WAL it keeps: pg_replication_slots joined with
 * pg_stat_activity on active_pid. For messages and the task's status.
 */
export interface SlotUsage {
  active: boolean;
  holder: { pid: number; applicationName: string | null; clientAddr: string | null } | null;
  /** WAL the server keeps for the slot (pg_current_wal_lsn() - restart_lsn). */
  retainedBytes: number | null;
  /** The same, as pg_size_pretty writes it ("16 MB"). */
  retainedPretty: string | null;
  /** WAL beyond the position the slot's reader confirmed (pg_current_wal_lsn() - confirmed_flush_lsn). */
  lagBytes: number | null;
}

/**
 * The columns of pg_replication_slots `s` joined with pg_stat_activity `a` that a
 * SlotUsage is read from (usageFromRow), for queries that want more of the slot too.
 */
export const SLOT_USAGE_COLUMNS = `s.active, s.active_pid, a.application_name, host(a.client_addr) AS client_addr,
       (pg_current_wal_lsn() - s.restart_lsn)::bigint::text AS retained,
       pg_size_pretty(pg_current_wal_lsn() - s.restart_lsn) AS retained_pretty,
       (pg_current_wal_lsn() - s.confirmed_flush_lsn)::bigint::text AS lag`;

/** The FROM clause SLOT_USAGE_COLUMNS needs, for the slot named by $1. */
export const SLOT_USAGE_FROM = `pg_replication_slots s LEFT JOIN pg_stat_activity a ON a.pid = s.active_pid
 WHERE s.slot_name = $1`;

/** A row with SLOT_USAGE_COLUMNS as a SlotUsage. */
export function usageFromRow(row: Record<string, unknown>): SlotUsage {
  const bytes = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return {
    active: row.active === true,
    holder:
      row.active_pid === null || row.active_pid === undefined
        ? null
        : {
            pid: Number(row.active_pid),
            applicationName: (row.application_name as string | null) ?? null,
            clientAddr: (row.client_addr as string | null) ?? null,
          },
    retainedBytes: bytes(row.retained),
    retainedPretty: (row.retained_pretty as string | null) ?? null,
    lagBytes: bytes(row.lag),
  };
}

export async function inspectSlot(client: pg.Client, slotName: string): Promise<SlotUsage | null> {
  const result = await client.query(`SELECT ${SLOT_USAGE_COLUMNS} FROM ${SLOT_USAGE_FROM}`, [
    slotName,
  ]);
  const row = result.rows[0];
  return row ? usageFromRow(row) : null;
}

/**
 * inspectSlot on a connection of its own, closed before returning. `timeoutMs` bounds
 * the connect: callers ask while retrying, when the server may be unreachable.
 */
export async function inspectSlotOnce(
  connection: pg.ClientConfig,
  slotName: string,
  timeoutMs: number,
): Promise<SlotUsage | null> {
  const client = new pg.Client({ ...connection, connectionTimeoutMillis: timeoutMs });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await inspectSlot(client, slotName);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** "pid 4242 (application_name 'pg_recvlogical', client 10.0.0.7)", or why there is none. */
export function describeHolder(usage: SlotUsage | null): string {
  const h = usage?.holder;
  if (!h) return usage?.active ? 'an unknown process' : 'no process any more';
  const client = h.clientAddr ? `, client ${h.clientAddr}` : '';
  return `pid ${h.pid} (application_name '${h.applicationName ?? ''}'${client})`;
}

/** "retained WAL 16 MB", or "retained WAL unknown" when Postgres could not be asked. */
export function describeRetained(usage: SlotUsage | null): string {
  return usage?.retainedPretty ? `retained WAL ${usage.retainedPretty}` : 'retained WAL unknown';
}

/** SQLSTATE 55006 object_in_use: "replication slot ... is active for PID n". */
export function isSlotInUse(error: unknown): boolean {
  const e = error as { code?: string; cause?: { code?: string } } | null;
  return e?.code === '55006' || e?.cause?.code === '55006';
}

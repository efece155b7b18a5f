/**
 * The replication slot: Postgres' memory of how far this connector has consumed the
 * WAL. It keeps the WAL the connector still needs (from restart_lsn) and remembers
 * the position the connector confirmed (confirmed_flush_lsn); streaming resumes at
 * max(requested LSN, confirmed_flush_lsn).
 *
 * Creation exports a snapshot: `CREATE_REPLICATION_SLOT ... (SNAPSHOT 'export')` on a
 * replication connection returns the slot's consistent point and a snapshot name.
 * A transaction that imports that snapshot sees exactly the data committed before the
 * consistent point, and streaming from the consistent point sends exactly the changes
 * after it: no gap, no overlap. The snapshot exists only while the creating connection
 * stays open and idle, so `ExportedSnapshot.release()` is called once every snapshot
 * transaction has imported it (an importing transaction keeps it alive on its own).
 *
 * Dropping: only a slot no process holds is ever dropped here, and which slots the
 * task may drop at all is decided in start-plan.ts (a slot this connector made).
 * Who holds a slot and what it retains: slot-usage.ts.
 */
import pg from 'pg';
import { formatLsn, type Lsn, parseLsn } from './lsn.ts';
import {
  describeHolder,
  describeRetained,
  inspectSlot,
  isSlotInUse,
  SLOT_USAGE_COLUMNS,
  SLOT_USAGE_FROM,
  type SlotUsage,
  usageFromRow,
} from './slot-usage.ts';

export class SlotError extends Error {
  constructor(
    readonly kind:
      | 'slot-missing'
      | 'slot-wrong-plugin'
      | 'slot-wrong-database'
      | 'wal-removed'
      | 'slot-in-use'
      | 'slot-not-owned',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'SlotError';
  }
}

export interface SlotInfo {
  slotName: string;
  plugin: string;
  database: string;
  active: boolean;
  restartLsn: Lsn | null;
  confirmedFlushLsn: Lsn | null;
  /** reserved, extended, unreserved or lost (lost: WAL it needed was removed). */
  walStatus: string | null;
  /** Who holds it and what it retains, read in the same query. */
  usage: SlotUsage;
}

export interface ExportedSnapshot {
  slotName: string;
  consistentPoint: Lsn;
  snapshotName: string;
  /** Close the creating connection; the snapshot must have been imported by then. */
  release(): Promise<void>;
}

export async function readSlot(client: pg.Client, slotName: string): Promise<SlotInfo | null> {
  const result = await client.query(
    `SELECT s.slot_name, s.plugin, s.database, s.restart_lsn::text, s.confirmed_flush_lsn::text,
            s.wal_status, ${SLOT_USAGE_COLUMNS}
       FROM ${SLOT_USAGE_FROM}`,
    [slotName],
  );
  const row = result.rows[0];
  if (!row) return null;
  return {
    slotName: row.slot_name,
    plugin: row.plugin,
    database: row.database,
    active: row.active,
    restartLsn: row.restart_lsn ? parseLsn(row.restart_lsn) : null,
    confirmedFlushLsn: row.confirmed_flush_lsn ? parseLsn(row.confirmed_flush_lsn) : null,
    walStatus: row.wal_status,
    usage: usageFromRow(row),
  };
}

/** Create a pgoutput slot and keep its exported snapshot open until release(). */
export async function createSlotExportingSnapshot(
  connection: pg.ClientConfig,
  slotName: string,
): Promise<ExportedSnapshot> {
  const client = new pg.Client({ ...connection, replication: 'database' } as pg.ClientConfig);
  client.on('error', () => undefined);
  await client.connect();
  try {
    const result = await client.query(
      `CREATE_REPLICATION_SLOT ${client.escapeIdentifier(slotName)} LOGICAL pgoutput (SNAPSHOT 'export')`,
    );
    const row = result.rows[0];
    return {
      slotName: row.slot_name,
      consistentPoint: parseLsn(row.consistent_point),
      snapshotName: row.snapshot_name,
      release: () => client.end().catch(() => undefined),
    };
  } catch (error) {
    await client.end().catch(() => undefined);
    throw error;
  }
}

/** Create a slot without a snapshot (snapshot.mode=no_data): streaming starts at its consistent point. */
export async function createSlot(client: pg.Client, slotName: string): Promise<Lsn> {
  const result = await client.query(
    "SELECT lsn::text FROM pg_create_logical_replication_slot($1, 'pgoutput')",
    [slotName],
  );
  return parseLsn(result.rows[0].lsn);
}

export async function dropSlot(client: pg.Client, slotName: string): Promise<void> {
  await client.query(
    'SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1',
    [slotName],
  );
}

/**
 * Why a task gives up on a slot another process holds, after its slot.max.retries
 * (`exhausted` says how many) spaced by slot.retry.delay.ms.
 */
export function slotHeldError(
  slotName: string,
  usage: SlotUsage | null,
  exhausted: string,
  delayMs: number,
  cause?: unknown,
): SlotError {
  const pid = usage?.holder?.pid ?? '<pid>';
  return new SlotError(
    'slot-in-use',
    `Replication slot '${slotName}' is active: held by ${describeHolder(usage)}, and still held ` +
      `${exhausted} ${delayMs} ms apart (slot.retry.delay.ms); ${describeRetained(usage)}. One slot ` +
      'serves one reader: if another connector or tool reads from it, give this connector its own ' +
      `slot.name; otherwise stop that reader (SELECT pg_terminate_backend(${pid})) and restart the task`,
    { cause },
  );
}

/**
 * Drop the slot if no process holds it. Answers 'dropped', 'missing', or the slot's
 * usage when it is held (also when it was taken between the look and the drop).
 */
export async function dropSlotIfInactive(
  client: pg.Client,
  slotName: string,
): Promise<'dropped' | 'missing' | SlotUsage> {
  const usage = await inspectSlot(client, slotName);
  if (usage === null) return 'missing';
  if (usage.active) return usage;
  try {
    await client.query('SELECT pg_drop_replication_slot($1)', [slotName]);
    return 'dropped';
  } catch (error) {
    if ((error as { code?: string }).code === '42704') return 'missing';
    if (isSlotInUse(error)) return (await inspectSlot(client, slotName)) ?? 'missing';
    throw error;
  }
}

/**
 * Drop a slot once no process holds it, waiting up to `timeoutMs` for the holder to
 * let go (a task stopping, maybe on another worker). Never waits without bound and
 * never terminates the holder: still held at the deadline, it throws a SlotError
 * naming the holder. A missing slot is not an error.
 */
export async function dropSlotWhenInactive(
  connection: pg.ClientConfig,
  slotName: string,
  timeoutMs: number,
  pollMs = 100,
): Promise<'dropped' | 'missing'> {
  const client = new pg.Client(connection);
  client.on('error', () => undefined);
  await client.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const outcome = await dropSlotIfInactive(client, slotName);
      if (typeof outcome === 'string') return outcome;
      if (Date.now() >= deadline)
        throw new SlotError(
          'slot-in-use',
          `Replication slot '${slotName}' is still held by ${describeHolder(outcome)} after ${timeoutMs} ms, ` +
            `so it was not dropped; ${describeRetained(outcome)}. Once nothing uses it, drop it with ` +
            `SELECT pg_drop_replication_slot(${client.escapeLiteral(slotName)});`,
        );
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}

export type ResumeCheck =
  /** Stream from the stored LSN; Postgres starts at the slot's confirmed position if later. */
  { resumeFrom: Lsn; note?: string } | { error: SlotError };

/**
 * Decide whether a stored offset LSN can be resumed from this slot.
 *
 * A stored LSN below confirmed_flush_lsn is normal: the task confirms the server's
 * position on idle keepalives without writing an offset, and only when every change
 * it received was already committed; the changes in between were not captured ones.
 * What cannot be resumed: a missing slot (changes since the offset are gone with it),
 * a slot of another plugin or database, and a slot whose WAL was removed (wal_status
 * 'lost', when max_slot_wal_keep_size was exceeded).
 */
export function checkResume(
  slot: SlotInfo | null,
  slotName: string,
  database: string,
  storedLsn: Lsn,
): ResumeCheck {
  if (!slot)
    return {
      error: new SlotError(
        'slot-missing',
        `Replication slot '${slotName}' does not exist but the stored offset is at LSN ${formatLsn(storedLsn)}: ` +
          'changes since then cannot be streamed. Use snapshot.mode=when_needed (or always) to take a new snapshot, ' +
          'or delete the connector offsets to start over',
      ),
    };
  if (slot.plugin !== 'pgoutput')
    return {
      error: new SlotError(
        'slot-wrong-plugin',
        `Replication slot '${slotName}' uses plugin '${slot.plugin}', not pgoutput: drop it or choose another slot.name`,
      ),
    };
  if (slot.database !== database)
    return {
      error: new SlotError(
        'slot-wrong-database',
        `Replication slot '${slotName}' belongs to database '${slot.database}', not '${database}': choose another slot.name`,
      ),
    };
  if (slot.walStatus === 'lost' || slot.restartLsn === null)
    return {
      error: new SlotError(
        'wal-removed',
        `Replication slot '${slotName}' has lost WAL it needed (wal_status ${slot.walStatus}): changes since LSN ` +
          `${formatLsn(storedLsn)} are gone. Raise max_slot_wal_keep_size and re-snapshot (snapshot.mode=when_needed)`,
      ),
    };
  const confirmed = slot.confirmedFlushLsn ?? 0;
  if (storedLsn < confirmed)
    return {
      resumeFrom: storedLsn,
      note: `stored LSN ${formatLsn(storedLsn)} is below the slot's confirmed ${formatLsn(confirmed)}; streaming resumes at ${formatLsn(confirmed)}`,
    };
  return { resumeFrom: storedLsn };
}

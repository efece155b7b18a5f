/**
 * What a deleted connector leaves in Postgres: its replication slot, which keeps every
 * byte of WAL from its restart_lsn on (Postgres cannot recycle it, and the disk fills
 * as writes go on), and the publication it manages. Called from the connector's
 * `deleted(config)` hook, after the runtime stopped the connector's tasks on this
 * worker (a task on another worker may still be letting go of the slot).
 *
 *   slot.drop.on.delete=true  the slot is dropped once no process holds it (waiting at
 *                             most `releaseTimeoutMs`; a holder is never terminated),
 *                             then the publication, unless publication.autocreate.mode
 *                             is disabled (then it is the user's, not the connector's).
 *   false (Debezium's habit)  both are left, and one WARN line says so: how much WAL the
 *                             slot retains and the exact SQL that drops them.
 *
 * Opens one connection (two while dropping) and closes them before returning. Errors
 * go to the caller; the runtime logs them and deletes the connector anyway.
 */
import pg from 'pg';
import type { PostgresCdcSettings } from './connector-config.ts';
import type { Logger } from './logger.ts';
import { publicationExists } from './publication.ts';
import { dropSlotWhenInactive } from './replication-slot.ts';
import { describeHolder, inspectSlot } from './slot-usage.ts';
import { clientConfig } from './startup-check.ts';
import { negotiateTls } from './tls.ts';

export async function cleanUpAfterDelete(
  s: PostgresCdcSettings,
  connectorName: string,
  log: Logger,
  releaseTimeoutMs: number,
): Promise<void> {
  await negotiateTls(s.connection, clientConfig(s));
  const client = new pg.Client(clientConfig(s));
  client.on('error', () => undefined);
  await client.connect();
  try {
    const slot = s.slotName;
    const managed = s.publicationMode !== 'disabled';
    const publication = client.escapeIdentifier(s.publicationName);
    const usage = await inspectSlot(client, slot);
    const hasPublication = managed && (await publicationExists(client, s.publicationName));
    if (s.slotDropOnDelete) {
      if (usage !== null) {
        await dropSlotWhenInactive(clientConfig(s), slot, releaseTimeoutMs);
        log.info(
          `connector '${connectorName}' was deleted: dropped its replication slot '${slot}'`,
        );
      }
      if (hasPublication) {
        await client.query(`DROP PUBLICATION IF EXISTS ${publication}`);
        log.info(
          `connector '${connectorName}' was deleted: dropped its publication ${publication}`,
        );
      }
      return;
    }
    const remains: string[] = [];
    if (usage !== null) {
      const held = usage.active ? ` (held right now by ${describeHolder(usage)})` : '';
      remains.push(
        `its replication slot '${slot}'${held} remains and retains ${usage.retainedPretty ?? 'an unknown amount'} ` +
          'of WAL on the server, more with every write, until it is dropped: ' +
          `SELECT pg_drop_replication_slot(${client.escapeLiteral(slot)});`,
      );
    }
    if (hasPublication)
      remains.push(`its publication ${publication} remains: DROP PUBLICATION ${publication};`);
    if (remains.length === 0) return;
    log.warn(
      `connector '${connectorName}' was deleted, but ${remains.join(' and ')} ` +
        '(with slot.drop.on.delete=true the connector drops them when it is deleted)',
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}

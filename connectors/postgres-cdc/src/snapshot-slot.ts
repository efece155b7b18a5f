/**
 * Making room for the slot a new snapshot needs, when this connector's old slot of the
 * same name exists (an interrupted snapshot, snapshot.mode=always or when_needed; the
 * plan decides the slot is this connector's, start-plan.ts). The old slot is dropped
 * only when no process holds it. A held one (a previous task still letting go, or
 * someone else) is tried again every slot.retry.delay.ms up to slot.max.retries
 * times, each wait reported through `report`, and then given up on with an error
 * naming the holder. The holder is never terminated.
 *
 * Called by the task: `dropOwnSlot` once from start(), `waitForOwnSlot` from the
 * task's background work when that found the slot held. Each attempt opens and closes
 * its own connection.
 */
import pg from 'pg';
import type { Logger } from './logger.ts';
import { dropSlotIfInactive, slotHeldError } from './replication-slot.ts';
import { RetryBudget } from './retry-budget.ts';
import { describeHolder, describeRetained, type SlotUsage } from './slot-usage.ts';

/** Drop the old slot unless a process holds it: null when it is gone, else who holds it. */
export async function dropOwnSlot(
  connection: pg.ClientConfig,
  slotName: string,
  log: Logger,
): Promise<SlotUsage | null> {
  const client = new pg.Client(connection);
  client.on('error', () => undefined);
  try {
    await client.connect();
    const outcome = await dropSlotIfInactive(client, slotName);
    if (typeof outcome !== 'string') return outcome;
    if (outcome === 'dropped')
      log.info(`dropped this connector's slot ${slotName} to take a new snapshot`);
    return null;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export interface SlotWaitOptions {
  connection: pg.ClientConfig;
  slotName: string;
  /** slot.max.retries and slot.retry.delay.ms. */
  maxRetries: number;
  delayMs: number;
  log: Logger;
  /** Each wait's detail (the holder, retry n of m, the WAL retained), and each usage seen. */
  report(detail: string, usage: SlotUsage): void;
  /** Resolves after `ms`, or early when the task stops. */
  wait(ms: number): Promise<void>;
  stopping(): boolean;
}

/**
 * Wait for the holder of the old slot (`held`, as dropOwnSlot saw it) to let go, and
 * drop the slot. True once it is gone; false when the task stopped meanwhile. Throws
 * a SlotError naming the holder once slot.max.retries are spent.
 */
export async function waitForOwnSlot(held: SlotUsage, o: SlotWaitOptions): Promise<boolean> {
  const budget = new RetryBudget('slot.max.retries', o.maxRetries);
  let usage: SlotUsage | null = held;
  while (usage !== null) {
    if (!budget.take()) throw slotHeldError(o.slotName, usage, budget.exhausted(), o.delayMs);
    const detail =
      `waiting to replace replication slot '${o.slotName}' for a new snapshot: held by ` +
      `${describeHolder(usage)}; ${budget.describe()}, next attempt in ${o.delayMs} ms; ` +
      describeRetained(usage);
    o.log.warn(detail);
    o.report(detail, usage);
    await o.wait(o.delayMs);
    if (o.stopping()) return false;
    usage = await dropOwnSlot(o.connection, o.slotName, o.log);
  }
  return true;
}

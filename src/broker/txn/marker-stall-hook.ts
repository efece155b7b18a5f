/**
 * A test-only fault hook for the crash tests of transaction markers
 * (test/integration/broker/transactions-marker-crash.test.ts). A SIGKILL from outside
 * cannot land between two markers of one transaction, which are written in one
 * synchronous step; this hook makes the process stop there and wait for it.
 *
 * `CONNECT_TEST_STALL_MARKERS=k1,k2,...` (whole numbers): the i-th transaction whose
 * markers this process writes writes at most k_i of them, in its partition order, and
 * then never the rest: its `write` never settles, so the transaction stays in
 * PrepareCommit/PrepareAbort with some partitions marked and the others not (k = 0: none
 * marked, the decision alone is durable), exactly as a process killed at that point
 * leaves it. Transactions past the list, or with no more than k_i partitions, are
 * written normally. The test then kills the process with SIGKILL; the stalled writes
 * also keep the coordinator from closing, so nothing but SIGKILL stops it.
 *
 * The variable is read once, when the broker builds its MarkerWriter. It cannot be set
 * by accident: its name says what it is for, a malformed value stops the broker from
 * starting (naming the variable), and an armed hook is logged as a warning at start.
 */
import type { Logger } from '../../util/logger.ts';

export const STALL_MARKERS_ENV = 'CONNECT_TEST_STALL_MARKERS';

/** How many markers each transaction may write, in the order their writes start. */
export interface MarkerStallHook {
  /** The limit for the transaction whose markers start now, or undefined for all of them. */
  nextLimit(): number | undefined;
}

/** The hook `env` asks for, or undefined when the variable is not set. */
export function markerStallHookFrom(
  env: NodeJS.ProcessEnv,
  logger: Logger,
): MarkerStallHook | undefined {
  const raw = env[STALL_MARKERS_ENV];
  if (raw === undefined) return undefined;
  if (!/^\d+(,\d+)*$/.test(raw)) {
    throw new Error(
      `${STALL_MARKERS_ENV} must be a comma-separated list of whole numbers, not '${raw}' (it is a test-only fault hook: unset it)`,
    );
  }
  const limits = raw.split(',').map(Number);
  logger.warn(
    { [STALL_MARKERS_ENV]: raw },
    'test fault hook armed: transactions stop writing their markers at these counts and never complete',
  );
  let started = 0;
  return { nextLimit: () => limits[started++] };
}

/** What a stalled write returns: a promise that never settles. */
export function stalled(logger: Logger, producerId: number, written: number): Promise<never> {
  logger.warn(
    { producerId, markers: written },
    `${STALL_MARKERS_ENV}: this transaction's remaining markers are never written`,
  );
  return new Promise<never>(() => {});
}

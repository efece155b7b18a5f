/**
 * Single Message Transforms: per-record functions configured in a connector's
 * `transforms` list, applied in order after a source task's poll (before the
 * converter) and before a sink task's put (after the converter). Optionally guarded
 * by a predicate (`transforms.<name>.predicate`, `.negate`).
 *
 * `apply` must not mutate its input: return the same object when nothing changes,
 * a new one (`{ ...record, value }`) otherwise, or null to drop the record. Called
 * synchronously from the task's runner, one record at a time; an instance belongs to
 * one task. Bad data throws DataException (subject to `errors.tolerance`).
 */
import type { ConnectRecord } from './connect-record.ts';

export interface Transformation {
  /** Called once, with the transform's own keys (`transforms.<name>.` stripped). */
  configure(config: Readonly<Record<string, unknown>>): void;
  apply<R extends ConnectRecord>(record: R): R | null;
  close?(): void;
}

export interface Predicate {
  configure(config: Readonly<Record<string, unknown>>): void;
  test(record: ConnectRecord): boolean;
  close?(): void;
}

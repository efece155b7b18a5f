/**
 * A record that cannot be buffered as a row (a value of the wrong type, one a column
 * type cannot hold): the row buffer takes the row back and the runtime's error
 * tolerance decides what becomes of the record.
 */
export class RowError extends Error {
  readonly kind = 'row';
}

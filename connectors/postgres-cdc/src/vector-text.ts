/**
 * pgvector's text forms to Debezium's vectors (io.debezium.data.vector.*, Vectors):
 *   vector     '[1,2.5,3]'        io.debezium.data.DoubleVector ARRAY<FLOAT64>
 *   halfvec    '[1,2.5,3]'        io.debezium.data.FloatVector  ARRAY<FLOAT32> (each
 *                                 element the float Float.parseFloat gives: Math.fround)
 *   sparsevec  '{1:0.5,3:2}/5'    io.debezium.data.SparseDoubleVector STRUCT {dimensions
 *                                 INT16, vector MAP<INT16, FLOAT64>} (indices from 1)
 * Debezium logs and sends null for text it cannot read; we throw (the caller names the
 * column), since a null would read as SQL NULL.
 */
import { Schemas } from '../../../src/connect/api/index.ts';

export const VectorSchemas = {
  DoubleVector: Schemas.array(Schemas.float64(), {
    name: 'io.debezium.data.DoubleVector',
    version: 1,
  }),
  FloatVector: Schemas.array(Schemas.float32(), {
    name: 'io.debezium.data.FloatVector',
    version: 1,
  }),
  SparseDoubleVector: Schemas.struct(
    [
      ['dimensions', Schemas.int16()],
      ['vector', Schemas.map(Schemas.int16(), Schemas.float64())],
    ],
    { name: 'io.debezium.data.SparseDoubleVector', version: 1, doc: 'Sparse double vector' },
  ),
} as const;

function elements(text: string): string[] {
  const t = text.trim();
  if (!t.startsWith('[') || !t.endsWith(']'))
    throw new Error(`not a pgvector vector: ${JSON.stringify(text.slice(0, 40))}`);
  const body = t.slice(1, -1).trim();
  return body === '' ? [] : body.split(',');
}

export function doubleVector(text: string): number[] {
  return elements(text).map((s) => Number(s));
}

export function floatVector(text: string): number[] {
  return elements(text).map((s) => Math.fround(Number(s)));
}

export function sparseVector(text: string): { dimensions: number; vector: Map<number, number> } {
  const m = /^\s*\{([^}]*)\}\s*\/\s*(\d+)\s*$/.exec(text);
  if (!m) throw new Error(`not a pgvector sparsevec: ${JSON.stringify(text.slice(0, 40))}`);
  const vector = new Map<number, number>();
  const body = m[1].trim();
  if (body !== '') {
    for (const pair of body.split(',')) {
      const [index, value] = pair.split(':');
      vector.set(Number(index), Number(value));
    }
  }
  const dimensions = Number(m[2]);
  // INT16, as Debezium's Short.parseShort reads them; pgvector allows far more.
  if (dimensions > 32767)
    throw new Error(`has ${dimensions} dimensions, more than an INT16 (SparseDoubleVector) holds`);
  return { dimensions, vector };
}

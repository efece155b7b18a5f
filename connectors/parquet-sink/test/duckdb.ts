/**
 * DuckDB as the independent reader of the sink's files in tests: one in-memory
 * database per query, closed before returning.
 */
import { DuckDBInstance } from '@duckdb/node-api';

export async function query(sql: string): Promise<Record<string, unknown>[]> {
  const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
  try {
    const conn = await instance.connect();
    try {
      const reader = await conn.runAndReadAll(sql);
      return reader.getRowObjectsJS() as Record<string, unknown>[];
    } finally {
      conn.closeSync();
    }
  } finally {
    instance.closeSync();
  }
}

/** Every Parquet file under a folder, with Hive partition columns. */
export function scan(folder: string): string {
  return `read_parquet('${folder}/**/*.parquet', hive_partitioning = true, union_by_name = true)`;
}

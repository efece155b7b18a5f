/**
 * The demo's proof that it works: the same question asked of Postgres and of the lake,
 * "how many rows does each table have now?", printed side by side.
 *
 * The lake holds every change, not the tables: each Parquet file is a run of one
 * topic partition's records in offset order, named `<topic>+<partition>+<start
 * offset>[.<codec>].parquet` (Confluent's layout), and deletes are rows with `__deleted = true` (unwrap's rewrite
 * mode). A table's current state is the last row per primary key, ordered by the
 * file's start offset and the row's position in it, without the deleted ones:
 * LAKE_STATE_SQL below, which DuckDB runs over the files as they are.
 *
 * Loop ownership: start() runs report() every interval (one at a time: a slow one
 * delays the next); stop() clears the timer, waits for the report in flight and
 * closes the DuckDB instance and the Postgres connection. stop() may be called after
 * prepare() alone, or after nothing.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import pg from 'pg';
import { topicOf } from './demo-pipeline.ts';
import { SHOP_TABLES } from './shop-schema.ts';

export type Counts = Record<(typeof SHOP_TABLES)[number], number>;

export interface CountsReport {
  postgres: Counts;
  /** Undefined when the lake could not be read (the reason is in lakeError). */
  lake?: Counts;
  lakeError?: string;
}

/** The lake folder of a table's topic. */
export function tableFolder(lakeDir: string, table: string): string {
  return join(lakeDir, 'topics', topicOf(table));
}

/** DuckDB SQL for a table's latest state in the lake: one row per live primary key. */
export function lakeStateSql(folder: string, columns = '*'): string {
  const files = `read_parquet('${folder.replace(/'/g, "''")}/**/*.parquet', filename = true, file_row_number = true, union_by_name = true, hive_partitioning = false)`;
  return `SELECT ${columns} FROM (
      SELECT * FROM ${files}
      QUALIFY row_number() OVER (
        PARTITION BY id
        ORDER BY CAST(regexp_extract(filename, '\\+(\\d+)(\\.\\w+)?\\.parquet$', 1) AS BIGINT) DESC, file_row_number DESC) = 1)
    WHERE coalesce(CAST(__deleted AS VARCHAR), 'false') <> 'true'`;
}

export class LakeReport {
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> = Promise.resolve();
  private stopped = false;
  private duck: { instance: DuckDBInstance; connection: DuckDBConnection } | undefined;
  private client: pg.Client | undefined;
  private preparing: Promise<void> | undefined;

  constructor(
    private readonly options: {
      lakeDir: string;
      connection: pg.ClientConfig;
      intervalMs: number;
      print: (report: CountsReport) => void;
    },
  ) {}

  /**
   * Loads DuckDB (a large native module) ahead of start(), so that the first report
   * does not wait for it. Idempotent; start() calls it too.
   */
  prepare(): Promise<void> {
    this.preparing ??= (async () => {
      // Loaded here, not at the top: only the demo needs DuckDB's native module.
      const { DuckDBInstance } = await import('@duckdb/node-api');
      const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
      this.duck = { instance, connection: await instance.connect() };
    })();
    return this.preparing;
  }

  async start(): Promise<void> {
    await this.prepare();
    const client = new pg.Client(this.options.connection);
    client.on('error', () => undefined);
    await client.connect();
    this.client = client;
    if (this.stopped) await this.stop();
    else this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.inFlight;
    await this.preparing?.catch(() => undefined);
    this.duck?.connection.closeSync();
    this.duck?.instance.closeSync();
    this.duck = undefined;
    await this.client?.end().catch(() => undefined);
    this.client = undefined;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.inFlight = this.report()
        .then(this.options.print, (e: Error) =>
          this.options.print({ postgres: emptyCounts(), lakeError: `Postgres: ${e.message}` }),
        )
        .then(() => this.schedule());
    }, this.options.intervalMs);
  }

  async report(): Promise<CountsReport> {
    const postgres = emptyCounts();
    for (const table of SHOP_TABLES) {
      const r = await this.client!.query(`SELECT count(*)::int AS n FROM ${table}`);
      postgres[table] = r.rows[0].n as number;
    }
    try {
      const lake = emptyCounts();
      for (const table of SHOP_TABLES) lake[table] = await this.lakeCount(table);
      return { postgres, lake };
    } catch (e) {
      return { postgres, lakeError: (e as Error).message };
    }
  }

  private async lakeCount(table: string): Promise<number> {
    const folder = tableFolder(this.options.lakeDir, table);
    if (!hasParquet(folder)) return 0;
    const reader = await this.duck!.connection.runAndReadAll(
      lakeStateSql(folder, 'count(*)::INTEGER AS n'),
    );
    return reader.getRowObjectsJS()[0]!.n as number;
  }
}

/** One line: both sides' counts and whether the lake has caught up. */
export function formatReport(report: CountsReport, now = new Date()): string {
  const time = now.toISOString().slice(11, 19);
  const side = (counts: Counts) => SHOP_TABLES.map((t) => `${t} ${counts[t]}`).join(', ');
  if (!report.lake) {
    return `${time}  postgres: ${side(report.postgres)}  |  lake: unreadable (${report.lakeError})`;
  }
  const behind = SHOP_TABLES.reduce(
    (sum, t) => sum + Math.abs(report.postgres[t] - report.lake![t]),
    0,
  );
  const verdict = behind === 0 ? 'caught up' : `lake ${behind} row${behind === 1 ? '' : 's'} off`;
  return `${time}  postgres: ${side(report.postgres)}  |  lake (DuckDB): ${side(report.lake)}  |  ${verdict}`;
}

function emptyCounts(): Counts {
  return { customers: 0, orders: 0 };
}

function hasParquet(folder: string): boolean {
  if (!existsSync(folder)) return false;
  return readdirSync(folder, { recursive: true }).some((f) => String(f).endsWith('.parquet'));
}

/**
 * `connect demo` as a user runs it, in a child process: it fills a lake whose tables
 * (the latest row per key, read by DuckDB from the Parquet files) equal the database's,
 * stops cleanly on SIGINT, and a second run over the same demo.dir resumes: the same
 * Postgres, the same connectors, and the lake keeps up with the new writes.
 *
 * The writer makes a fixed number of changes per run (demo.writes.max) quickly, and
 * the sink rotates its files every 300 ms, so each run is bounded by start-up time.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it, onTestFailed, onTestFinished } from 'vitest';
import { query } from '../../../connectors/parquet-sink/test/duckdb.ts';
import { capturedContext } from '../../../src/cli/cli-context.ts';
import { runDemo } from '../../../src/cli/demo-command.ts';
import { freePort } from '../../helpers/ports.ts';
import { spawnConnect, type TestProcess } from '../../helpers/processes.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import { waitFor } from '../../helpers/wait.ts';

const WRITES_PER_RUN = 30;

/** Rows as the test compares them: `id:column...` sorted, so a mismatch reads easily. */
async function databaseRows(port: number): Promise<Record<string, string[]>> {
  const client = new pg.Client({
    host: '127.0.0.1',
    port,
    user: 'postgres',
    password: 'postgres',
    database: 'shop',
  });
  await client.connect();
  try {
    const customers = await client.query('SELECT id, name, country FROM customers ORDER BY id');
    const orders = await client.query(
      'SELECT id, customer_id, status, amount::text AS amount FROM orders ORDER BY id',
    );
    return {
      customers: customers.rows.map((r) => `${r.id}:${r.name}:${r.country}`),
      orders: orders.rows.map((r) => `${r.id}:${r.customer_id}:${r.status}:${r.amount}`),
    };
  } finally {
    await client.end();
  }
}

/**
 * The lake's tables, computed here independently of the demo's own query: every file
 * of a topic, rows ordered by the start offset in the file's name and the row's place
 * in it, the last row per id kept unless it is a delete.
 */
async function lakeRows(lake: string): Promise<Record<string, string[]>> {
  const latest = async (topic: string, columns: string) => {
    const rows = await query(`
      WITH changes AS (
        SELECT *, CAST(regexp_extract(filename, '\\+(\\d+)(\\.\\w+)?\\.parquet$', 1) AS BIGINT) AS start_offset
          FROM read_parquet('${lake}/topics/${topic}/*/*.parquet', filename = true,
                            file_row_number = true, hive_partitioning = false))
      SELECT row FROM (
        SELECT ${columns} AS row, id, __deleted FROM changes
        QUALIFY row_number() OVER (PARTITION BY id ORDER BY start_offset DESC, file_row_number DESC) = 1)
       WHERE NOT coalesce(__deleted, false)
       ORDER BY id`);
    return rows.map((r) => String(r.row));
  };
  return {
    customers: await latest('shop.public.customers', "concat_ws(':', id, name, country)"),
    orders: await latest(
      'shop.public.orders',
      "concat_ws(':', id, customer_id, status, CAST(amount AS VARCHAR))",
    ),
  };
}

/** The first line printed after `after` that matches `pattern`. */
function lineAfter(p: TestProcess, after: string, pattern: RegExp): string | undefined {
  const lines = p.output();
  const start = lines.findIndex((l) => l.includes(after));
  return start < 0 ? undefined : lines.slice(start + 1).find((l) => pattern.test(l));
}

async function stopWithSigint(p: TestProcess): Promise<void> {
  p.signal('SIGINT');
  const status = await p.exited;
  const output = p.output().join('\n');
  expect(status, output).toEqual({ code: 0, signal: null });
  expect(output).not.toContain('shutdown did not finish');
  expect(output).not.toContain('leaked handle');
  expect(output).not.toMatch(/^error:/m);
}

describe('connect demo', () => {
  it('refuses unknown keys, a taken port and an unwritable demo.dir before starting anything', async () => {
    const dir = useTmpDir();
    const run = async (...options: string[]) => {
      const ctx = capturedContext();
      return { code: await runDemo(ctx, options), stderr: ctx.stderr };
    };
    expect(await run('demo.wrties.max=3', 'listners=http://127.0.0.1:1')).toEqual({
      code: 2,
      stderr: [
        "error: unknown key 'demo.wrties.max' (from -o): did you mean 'demo.writes.max'?",
        "error: unknown key 'listners' (from -o): did you mean 'listeners'?",
      ],
    });

    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => taken.close(() => resolve())));
    const port = (taken.address() as { port: number }).port;
    const busy = await run(
      `demo.dir=${join(dir, 'demo')}`,
      `demo.postgres.port=${port}`,
      'broker.port=0',
      'listeners=http://127.0.0.1:0',
    );
    expect(busy.code).toBe(2);
    expect(busy.stderr).toHaveLength(1);
    expect(busy.stderr[0]).toContain(
      `error: port ${port} on 127.0.0.1 (demo.postgres.port) is in use`,
    );

    writeFileSync(join(dir, 'a-file'), '');
    const unwritable = await run(`demo.dir=${join(dir, 'a-file', 'demo')}`);
    expect(unwritable.code).toBe(2);
    expect(unwritable.stderr).toEqual([
      expect.stringMatching(/^error: demo\.dir .*a-file\/demo is not writable: ENOTDIR/),
    ]);
  });

  it('fills a lake equal to the database, stops on SIGINT and resumes on a second run', async () => {
    const root = mkdtempSync(join(tmpdir(), 'connect-demo-'));
    // As root the demo's Postgres runs as the postgres user, who must reach demo.dir.
    chmodSync(root, 0o755);
    const dir = join(root, 'demo');
    const postgresPort = await freePort();
    const running: TestProcess[] = [];
    onTestFailed(() => {
      for (const p of running) console.error(p.output().slice(-40).join('\n'));
    });
    onTestFinished(async () => {
      for (const p of running) await p.stop();
      // A demo killed by a failed test leaves its Postgres (its own process group) running.
      const pidFile = join(dir, 'postgres', 'postmaster.pid');
      if (existsSync(pidFile)) {
        try {
          process.kill(Number(readFileSync(pidFile, 'utf8').split('\n')[0]), 'SIGKILL');
        } catch {
          // already gone
        }
      }
      rmSync(root, { recursive: true, force: true });
    });
    const run = () => {
      const p = spawnConnect([
        'demo',
        ...[
          `demo.dir=${dir}`,
          `demo.postgres.port=${postgresPort}`,
          'demo.writes.per.second=100',
          `demo.writes.max=${WRITES_PER_RUN}`,
          'demo.lake.flush.interval.ms=300',
          'demo.report.interval.ms=300',
          'broker.port=0',
          'listeners=http://127.0.0.1:0',
        ].flatMap((o) => ['-o', o]),
      ]);
      running.push(p);
      return p;
    };
    const writerDone = `the writer made ${WRITES_PER_RUN} changes`;

    const first = run();
    await first.waitForLine(/database shop created from .*shop\.sql/, 60_000);
    await first.waitForLine('connector shop-cdc created', 60_000);
    await first.waitForLine('connector shop-lake created', 60_000);
    const restUrl = /REST API {2}(http:\/\/\S+)/.exec(
      await first.waitForLine(/REST API {2}http/),
    )![1]!;
    const status = await fetch(`${restUrl}/connectors?expand=status`);
    expect(Object.keys((await status.json()) as object).sort()).toEqual(['shop-cdc', 'shop-lake']);
    await first.waitForLine(writerDone, 30_000);
    const caughtUp = await waitFor(
      'the printed counts to be equal after the writes',
      () => lineAfter(first, writerDone, /caught up$/),
      30_000,
    );
    const database = await databaseRows(postgresPort);
    // The same counts the demo printed, and the same rows.
    expect(caughtUp).toContain(
      `postgres: customers ${database.customers!.length}, orders ${database.orders!.length}`,
    );
    await waitFor(
      'the lake to hold the database rows',
      async () => {
        const lake = await lakeRows(join(dir, 'lake'));
        return JSON.stringify(lake) === JSON.stringify(database) ? true : undefined;
      },
      15_000,
    );
    expect(await lakeRows(join(dir, 'lake'))).toEqual(database);
    await stopWithSigint(first);
    // Postgres removes its pid file on a clean shutdown.
    expect(existsSync(join(dir, 'postgres', 'postmaster.pid'))).toBe(false);

    const second = run();
    await second.waitForLine('database shop found from an earlier run', 60_000);
    await second.waitForLine('connector shop-cdc found from an earlier run', 60_000);
    await second.waitForLine('connector shop-lake found from an earlier run', 60_000);
    await second.waitForLine(writerDone, 30_000);
    await waitFor(
      'the printed counts to be equal after the second run’s writes',
      () => lineAfter(second, writerDone, /caught up$/),
      30_000,
    );
    const database2 = await databaseRows(postgresPort);
    expect(database2).not.toEqual(database);
    await waitFor(
      'the lake to hold the database rows after the second run',
      async () => {
        const lake = await lakeRows(join(dir, 'lake'));
        return JSON.stringify(lake) === JSON.stringify(database2) ? true : undefined;
      },
      15_000,
    );
    await stopWithSigint(second);
  }, 180_000);
});

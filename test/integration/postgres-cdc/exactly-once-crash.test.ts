/**
 * Exactly-once Postgres CDC (KIP-618) under crashes: 100k inserts, updates and deletes
 * stream through a three-worker cluster (`connect worker` child processes, the broker
 * in the test process) while the worker running the CDC task is killed with SIGKILL
 * twice, each time once a share of the stream is out (the second kill hits the worker
 * that took the task over after the first). A
 * read_committed reader of the topic then finds every change exactly once, in commit
 * order per key, and the state it replays equals the table.
 *
 * That at-least-once delivery repeats records after such a crash is shown by
 * test/integration/distributed/exactly-once-source.test.ts (the same freeze with
 * exactly-once disabled) and by crash-restart.test.ts here (the CDC redelivery window).
 */
import type pg from 'pg';
import { describe, expect, it, onTestFailed, onTestFinished } from 'vitest';
import { startTestBroker } from '../../helpers/broker.ts';
import { usePostgres } from '../../helpers/postgres.ts';
import { readCommitted } from '../broker/helpers/transaction-reader.ts';
import {
  baseOverrides,
  rest,
  startWorker,
  type WorkerProcess,
  waitFor,
} from '../distributed/distributed-helpers.ts';
import { cdcConnectorConfig, cdcPluginPath, endOffset, useAdmin } from './cdc-worker.ts';

const cluster = usePostgres();
const TOPIC = 'PostgreSQL_server.public.big';

interface Workload {
  rows: number;
  perTx: number;
  updateRounds: number;
  /** Every deleteEvery-th row is deleted at the end. */
  deleteEvery: number;
  /** Pause after each transaction, so the kills land mid-stream. */
  pauseSeconds: number;
}

function changesOf(w: Workload): number {
  return w.rows * (1 + w.updateRounds) + Math.floor(w.rows / w.deleteEvery);
}

function generator(w: Workload): string {
  const txs = w.rows / w.perTx - 1;
  const range = `tx * ${w.perTx} AND tx * ${w.perTx} + ${w.perTx - 1}`;
  return `
DO $$
BEGIN
  FOR tx IN 0..${txs} LOOP
    INSERT INTO big SELECT g, 0 FROM generate_series(tx * ${w.perTx}, tx * ${w.perTx} + ${w.perTx - 1}) g;
    COMMIT;
    PERFORM pg_sleep(${w.pauseSeconds});
  END LOOP;
  FOR round IN 1..${w.updateRounds} LOOP
    FOR tx IN 0..${txs} LOOP
      UPDATE big SET v = v + 1 WHERE id BETWEEN ${range};
      COMMIT;
      PERFORM pg_sleep(${w.pauseSeconds});
    END LOOP;
  END LOOP;
  FOR tx IN 0..${txs} LOOP
    DELETE FROM big WHERE id BETWEEN ${range} AND id % ${w.deleteEvery} = 0;
    COMMIT;
  END LOOP;
END $$`;
}

interface Change {
  id: number;
  op: string;
  v: number | null;
  /** The change's transaction id and LSN: the same however often it is delivered. */
  sequence: string;
}

async function changes(bootstrap: string): Promise<Change[]> {
  const out: Change[] = [];
  for (const r of await readCommitted(bootstrap, TOPIC, 1)) {
    if (r.value === null) continue; // the tombstone after a delete
    const value = JSON.parse(r.value.toString('utf8'));
    out.push({
      id: JSON.parse(r.key!.toString('utf8')).id,
      op: value.op,
      v: value.after?.v ?? null,
      sequence: `${value.source.txId}:${value.source.lsn}`,
    });
  }
  return out;
}

/**
 * The worker that runs the CDC task, by the workers' own logs rather than the status
 * topic (which can trail a move): once every worker applied the same generation, the
 * one whose assignment lists the task.
 */
async function taskOwner(workers: WorkerProcess[]): Promise<string | undefined> {
  const latest = workers.map((w) => {
    const line = w.process
      .output()
      .filter((l) => l.includes('"msg":"assignment applied"'))
      .at(-1);
    return line === undefined
      ? undefined
      : (JSON.parse(line) as { generation: number; tasks: string[] });
  });
  const generations = new Set(latest.map((a) => a?.generation));
  if (generations.size !== 1 || latest[0] === undefined) return undefined;
  const i = latest.findIndex((a) => a?.tasks.includes('big-0'));
  if (i < 0) return undefined;
  const s = await rest(workers[i]!, 'GET', '/connectors/big/status');
  return s.body.tasks?.[0]?.state === 'RUNNING' && s.body.tasks[0].worker_id === workers[i]!.id
    ? workers[i]!.id
    : undefined;
}

/** The workers' last few warnings and errors (pino levels 40+), one line each. */
function lastWarnings(workers: WorkerProcess[]): string {
  return workers
    .flatMap((w) =>
      w.process
        .output()
        .filter((l) => /"level":(4|5|6)0/.test(l))
        .slice(-3)
        .map((l) => `${w.id}: ${l.slice(0, 400)}`),
    )
    .join(' | ');
}

async function runCrashes(options: {
  workload: Workload;
  kills: number;
}): Promise<{ changes: Change[]; table: Map<number, number> }> {
  const { workload } = options;
  const total = changesOf(workload);
  const db = await cluster().freshDatabase('eos');
  const sql: pg.Client = await cluster().client(db);
  sql.on('error', () => undefined);
  const writer: pg.Client = await cluster().client(db);
  writer.on('error', () => undefined);
  onTestFinished(async () => {
    await writer.end().catch(() => undefined);
    await sql.end().catch(() => undefined);
  });
  await sql.query('CREATE TABLE big (id int PRIMARY KEY, v int NOT NULL)');

  const broker = await startTestBroker({
    config: { 'group.min.session.timeout.ms': 500, 'transaction.state.log.num.partitions': 3 },
  });
  const workers: WorkerProcess[] = [];
  onTestFinished(async () => {
    for (const w of workers) await w.process.stop();
    await broker.stop();
  });
  const args = [
    '-o',
    `bootstrap.servers=${broker.bootstrap}`,
    ...baseOverrides({
      'plugin.path': cdcPluginPath,
      'key.converter': 'org.apache.kafka.connect.json.JsonConverter',
      'value.converter': 'org.apache.kafka.connect.json.JsonConverter',
      'key.converter.schemas.enable': 'false',
      'value.converter.schemas.enable': 'false',
      'scheduled.rebalance.max.delay.ms': '0',
      'session.timeout.ms': '1500',
      'offset.storage.partitions': '3',
      'offset.flush.interval.ms': '500',
      'exactly.once.source.support': 'enabled',
    }),
  ];
  workers.push(...(await Promise.all([0, 1, 2].map(() => startWorker(args)))));
  onTestFailed(() => {
    for (const w of workers)
      console.error(`--- ${w.id} ---\n${w.process.output().slice(-40).join('\n')}`);
  });

  const config = cdcConnectorConfig(cluster(), db, {
    'table.include.list': 'public.big',
    'exactly.once.support': 'required',
  });
  const created = await rest(workers[0]!, 'PUT', '/connectors/big/config', config);
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  await waitFor(
    'the slot (the snapshot of the empty table is done)',
    async () => {
      const slots = await sql.query('SELECT 1 FROM pg_replication_slots WHERE slot_name = $1', [
        db,
      ]);
      if (slots.rowCount === 1) return true;
      // Thrown, so a timeout's message (the part of a CI log that survives) says where
      // the start stands: the connector's status and the workers' last warnings.
      throw new Error(
        `status ${JSON.stringify((await rest(workers[0]!, 'GET', '/connectors/big/status')).body)}; ${lastWarnings(workers)}`,
      );
    },
    60_000,
  );

  const admin = await useAdmin(broker.bootstrap);
  const generating = writer.query(generator(workload));
  for (let kill = 1; kill <= options.kills; kill++) {
    const share = (kill * total) / (options.kills + 1.5);
    await waitFor(
      `${Math.round(share)} changes out`,
      // The log's end (aborted records and markers included): a cheap progress gauge;
      // and an offset stored, so the task resumes from the middle of the stream.
      async () =>
        ((await endOffset(admin, TOPIC)) ?? 0) >= share &&
        (await readCommitted(broker.bootstrap, 'connect-offsets', 3)).some((r) =>
          r.key?.toString('utf8').startsWith('["big",'),
        )
          ? true
          : undefined,
      120_000,
    );
    const owner = await waitFor('the task running', () => taskOwner(workers), 60_000);
    const victim = workers.findIndex((w) => w.id === owner);
    expect(victim).toBeGreaterThanOrEqual(0);
    workers[victim]!.process.signal('SIGKILL');
    await workers[victim]!.process.exited;
    console.log(`kill ${kill}: SIGKILL ${owner} at about ${Math.round(share)} of ${total} changes`);
    // Not started again: the cluster goes on with the workers left, so each kill
    // lands on a worker that took the task over from the one killed before.
    workers.splice(victim, 1);
  }
  await generating;

  const finalLsn = Number(
    (await sql.query("SELECT (pg_current_wal_lsn() - '0/0')::bigint::text AS l")).rows[0].l,
  );
  // Done once the slot is confirmed past the last change: the task confirms only what
  // its committed offsets cover.
  await waitFor(
    'the slot confirmed past the last change',
    async () => {
      const r = await sql.query(
        `SELECT (confirmed_flush_lsn - '0/0')::bigint::text AS lsn FROM pg_replication_slots WHERE slot_name = $1`,
        [db],
      );
      return Number(r.rows[0]?.lsn ?? 0) >= finalLsn || undefined;
    },
    120_000,
  );
  const table = new Map<number, number>(
    (await sql.query('SELECT id, v FROM big')).rows.map((r) => [r.id as number, r.v as number]),
  );
  return { changes: await changes(broker.bootstrap), table };
}

describe('exactly-once Postgres CDC in a three-worker cluster', () => {
  it('delivers 100k changes exactly once, in order per key, through two SIGKILLs', {
    timeout: 240_000,
  }, async () => {
    const workload = {
      rows: 16_000,
      perTx: 400,
      updateRounds: 5,
      deleteEvery: 4,
      pauseSeconds: 0.01,
    };
    const { changes: seen, table } = await runCrashes({ workload, kills: 2 });
    expect(changesOf(workload)).toBe(100_000);
    const sequences = new Set(seen.map((c) => c.sequence));
    expect(seen.length - sequences.size).toBe(0);
    expect(seen.length).toBe(changesOf(workload));
    // In commit order per key: inserted at 0, each update one more, maybe deleted.
    const state = new Map<number, number>();
    for (const c of seen) {
      if (c.op === 'c') expect([c.id, state.has(c.id)]).toEqual([c.id, false]);
      else if (c.op === 'u')
        expect([c.id, c.v]).toEqual([c.id, (state.get(c.id) ?? Number.NaN) + 1]);
      else expect([c.id, c.op]).toEqual([c.id, 'd']);
      if (c.op === 'd') state.delete(c.id);
      else state.set(c.id, c.v as number);
    }
    expect(state).toEqual(table);
  });
});

/**
 * The shop's live traffic: one change every 1/rate seconds, each its own transaction
 * on one connection: new customers and orders, orders moving NEW -> PAID -> SHIPPED
 * (their amount changing too), shipped orders deleted, customers moving country.
 *
 * In bursts: `burstMs` of writing, then `pauseMs` of quiet (0: no pauses). A lake that
 * trails the database by a few seconds would otherwise never show the same counts;
 * with pauses longer than its delay it catches up in each one, for all to see.
 *
 * Customers are never deleted (orders reference them), so every id from 1 to the
 * highest is a customer and a new order picks one without a query. New ids continue
 * from the highest in the tables, so a second run goes on where the first stopped.
 *
 * Loop ownership: start() schedules the loop; stop() stops scheduling and waits for
 * the change in flight, then closes the connection. After `max` changes (0: none) the
 * loop ends by itself and `onLimit` is called; a failed change ends it with `onError`.
 */
import pg from 'pg';

export interface ShopWriterOptions {
  connection: pg.ClientConfig;
  writesPerSecond: number;
  /** Length of a burst of writes, then of the quiet after it (0: write without pauses). */
  burstMs: number;
  pauseMs: number;
  /** Changes in this run; 0 means no limit. */
  max: number;
  onLimit?: (changes: number) => void;
  onError?: (error: Error) => void;
  random?: () => number;
}

type Change =
  | 'insert-order'
  | 'update-order'
  | 'delete-order'
  | 'insert-customer'
  | 'update-customer';

/** Cumulative weights: mostly new and progressing orders, so the tables grow slowly. */
const MIX: ReadonlyArray<[number, Change]> = [
  [0.45, 'insert-order'],
  [0.75, 'update-order'],
  [0.87, 'delete-order'],
  [0.95, 'insert-customer'],
  [1, 'update-customer'],
];
const COUNTRIES = ['GB', 'US', 'DE', 'FR', 'NL', 'JP', 'BR', 'IN'];

export class ShopWriter {
  private client: pg.Client | undefined;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> = Promise.resolve();
  private stopped = false;
  private maxCustomer = 0;
  private maxOrder = 0;
  /** When the current burst started, and the changes made in it. */
  private burstStart = 0;
  private inBurst = 0;
  /** Changes made in this run. */
  changes = 0;
  private readonly random: () => number;

  constructor(private readonly options: ShopWriterOptions) {
    this.random = options.random ?? Math.random;
  }

  async start(): Promise<void> {
    const client = new pg.Client(this.options.connection);
    // A dropped connection is reported by the next query; without a listener it would crash.
    client.on('error', () => undefined);
    await client.connect();
    this.client = client;
    const ids = await client.query(
      'SELECT (SELECT coalesce(max(id), 0) FROM customers) AS c, (SELECT coalesce(max(id), 0) FROM orders) AS o',
    );
    this.maxCustomer = Number(ids.rows[0].c);
    this.maxOrder = Number(ids.rows[0].o);
    this.burstStart = performance.now();
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.inFlight;
    await this.client?.end().catch(() => undefined);
    this.client = undefined;
  }

  private schedule(): void {
    if (this.stopped) return;
    if (this.options.max > 0 && this.changes >= this.options.max) {
      this.options.onLimit?.(this.changes);
      return;
    }
    // Due times from the burst's start, not from the last change: a slow change does not
    // slow the rate.
    const interval = 1000 / this.options.writesPerSecond;
    let due = this.burstStart + this.inBurst * interval;
    const { burstMs, pauseMs } = this.options;
    if (pauseMs > 0 && this.inBurst > 0 && due >= this.burstStart + burstMs) {
      this.burstStart += burstMs + pauseMs;
      this.inBurst = 0;
      due = this.burstStart;
    }
    this.timer = setTimeout(
      () => {
        this.inFlight = this.changeOnce().then(
          () => this.schedule(),
          (error: Error) => {
            if (!this.stopped) this.options.onError?.(error);
          },
        );
      },
      Math.max(0, due - performance.now()),
    );
  }

  private async changeOnce(): Promise<void> {
    const r = this.random();
    const kind = MIX.find(([limit]) => r < limit)?.[1] ?? 'insert-order';
    if (!(await this.apply(kind))) await this.apply('insert-order');
    this.changes += 1;
    this.inBurst += 1;
  }

  /** Makes one change of the kind; false when there was no row to change. */
  private async apply(kind: Change): Promise<boolean> {
    const client = this.client!;
    switch (kind) {
      case 'insert-order': {
        const customer = 1 + Math.floor(this.random() * this.maxCustomer);
        const amount = (1 + this.random() * 200).toFixed(2);
        await client.query('INSERT INTO orders (id, customer_id, amount) VALUES ($1, $2, $3)', [
          this.maxOrder + 1,
          customer,
          amount,
        ]);
        this.maxOrder += 1;
        return true;
      }
      case 'update-order': {
        const updated = await client.query(
          `UPDATE orders SET status = CASE status WHEN 'NEW' THEN 'PAID' ELSE 'SHIPPED' END,
                             amount = amount + 1, updated_at = now()
            WHERE id = (SELECT id FROM orders WHERE status <> 'SHIPPED' ORDER BY random() LIMIT 1)`,
        );
        return updated.rowCount === 1;
      }
      case 'delete-order': {
        const deleted = await client.query(
          `DELETE FROM orders WHERE id = (SELECT id FROM orders WHERE status = 'SHIPPED' ORDER BY id LIMIT 1)`,
        );
        return deleted.rowCount === 1;
      }
      case 'insert-customer': {
        const id = this.maxCustomer + 1;
        await client.query(
          'INSERT INTO customers (id, name, email, country) VALUES ($1, $2, $3, $4)',
          [id, `Customer ${id}`, `customer${id}@example.com`, this.country()],
        );
        this.maxCustomer = id;
        return true;
      }
      case 'update-customer': {
        if (this.maxCustomer === 0) return false;
        const id = 1 + Math.floor(this.random() * this.maxCustomer);
        await client.query('UPDATE customers SET country = $1 WHERE id = $2', [this.country(), id]);
        return true;
      }
    }
  }

  private country(): string {
    return COUNTRIES[Math.floor(this.random() * COUNTRIES.length)]!;
  }
}

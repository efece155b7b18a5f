/**
 * A group member's own connection to its group coordinator: found with
 * FindCoordinator through the shared ClusterClient, then opened separately, so a
 * JoinGroup parked in a rebalance (a broker answers one connection's requests in
 * order) never holds up internal-topic reads, and closing it cuts such a request
 * short. Both loops of the member share it; one open attempt at a time.
 *
 * `connection(deadline)` gives up at `deadline` (ms, the member's clock): a member
 * holding work must notice a lost session on time even when the network is silent
 * and connecting hangs. A connection that arrives after its deadline is closed.
 */
import { BrokerConnection } from '../../protocol/client/broker-connection.ts';
import type { ClusterClient } from '../../protocol/client/cluster-client.ts';
import type { Clock } from '../../util/clock.ts';
import type { Timers } from '../../util/timers.ts';

export interface CoordinatorLinkOptions {
  client: ClusterClient;
  groupId: string;
  /** Bounds connecting and each request's default wait. */
  sessionTimeoutMs: number;
  clock: Clock;
  timers: Timers;
  /** Opens a connection (default: a new BrokerConnection); tests route it through a relay. */
  openConnection?: (host: string, port: number) => Promise<BrokerConnection>;
}

export class CoordinatorLink {
  private current: BrokerConnection | undefined;
  private opening: Promise<BrokerConnection> | undefined;

  constructor(private readonly options: CoordinatorLinkOptions) {}

  /** The live connection, if any, without opening one. */
  get live(): BrokerConnection | undefined {
    return this.current && !this.current.closed ? this.current : undefined;
  }

  /** The connection, opened if needed; rejects at `deadline` if given. */
  connection(deadline?: number): Promise<BrokerConnection> {
    const live = this.live;
    if (live) return Promise.resolve(live);
    this.opening ??= this.open().finally(() => {
      this.opening = undefined;
    });
    const opening = this.opening.then((conn) => {
      this.current = conn;
      return conn;
    });
    return deadline === undefined ? opening : this.before(opening, deadline);
  }

  /** A second, short-lived connection to the coordinator (e.g. LeaveGroup); the caller closes it. */
  openSeparate(): Promise<BrokerConnection> {
    return this.open();
  }

  /** Closes the connection (requests on it fail); the next `connection()` opens a new one. */
  drop(): void {
    this.current?.close();
    this.current = undefined;
  }

  private async open(): Promise<BrokerConnection> {
    const found = await this.options.client.coordinatorFor(this.options.groupId);
    const at = found.address.lastIndexOf(':');
    const host = found.address.slice(0, at);
    const port = Number(found.address.slice(at + 1));
    if (this.options.openConnection) return this.options.openConnection(host, port);
    return BrokerConnection.connect(host, port, {
      clientId: `connect-${this.options.groupId}`,
      connectTimeoutMs: this.options.sessionTimeoutMs,
      requestTimeoutMs: this.options.sessionTimeoutMs,
    });
  }

  private before(opening: Promise<BrokerConnection>, deadline: number): Promise<BrokerConnection> {
    return new Promise((resolve, reject) => {
      let late = false;
      const cancel = this.options.timers.schedule(deadline - this.options.clock.now(), () => {
        late = true;
        reject(new Error('the group coordinator could not be reached before the session deadline'));
      });
      opening.then(
        (conn) => {
          cancel();
          if (!late) resolve(conn);
          else if (this.current === conn) this.drop();
        },
        (err) => {
          cancel();
          if (!late) reject(err);
        },
      );
    });
  }
}

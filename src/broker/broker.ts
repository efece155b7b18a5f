/**
 * The embedded broker: composes the TCP server, the log manager, the group
 * coordinator and producer state into one single-node Kafka-protocol broker.
 *
 * Contract used by the CLI and the test harness (kept stable while the broker is
 * being built): `startBroker` resolves once the listener accepts connections, and
 * `stop()` closes the listener, answers or drops in-flight requests, flushes every
 * log and resolves when nothing is left running.
 */

export interface BrokerOptions {
  /** Address to listen on; 0.0.0.0 listens everywhere. */
  host: string;
  /** 0 picks a free port (tests); `RunningBroker.port` tells which. */
  port: number;
  /** Host clients are told to connect to in Metadata; defaults to host (or 127.0.0.1 for 0.0.0.0). */
  advertisedHost?: string;
  /** Directory holding partition logs and broker metadata. */
  dataDir: string;
  nodeId: number;
  /** Parsed broker-level config values keyed by Kafka's names (log.*, num.partitions, ...). */
  config: Record<string, unknown>;
}

export interface RunningBroker {
  readonly host: string;
  readonly port: number;
  stop(): Promise<void>;
}

export class BrokerNotBuiltError extends Error {
  constructor() {
    super(
      'The embedded broker is not built yet (see the issue "Embedded broker I"). Set bootstrap.servers to a Kafka cluster instead.',
    );
    this.name = 'BrokerNotBuiltError';
  }
}

export async function startBroker(_options: BrokerOptions): Promise<RunningBroker> {
  throw new BrokerNotBuiltError();
}

/**
 * Starting the embedded broker from parsed config values, shared by `connect broker`
 * and `connect worker`. Only the CLI wires a broker into a process (DESIGN.md): the
 * Connect runtime reaches it over the Kafka protocol like any other cluster.
 */
import { resolve } from 'node:path';
import { type BrokerOptions, type RunningBroker, startBroker } from '../broker/broker.ts';
import { startBrokerThread } from '../broker/broker-thread.ts';
import { advertisedHost, brokerConfigDefs } from '../config/broker-config.ts';
import type { Shutdown } from '../util/shutdown.ts';
import type { CliContext } from './cli-context.ts';

export function brokerOptions(values: Record<string, unknown>): BrokerOptions {
  const config: Record<string, unknown> = {};
  for (const def of brokerConfigDefs) config[def.name] = values[def.name];
  return {
    host: values['broker.host'] as string,
    port: values['broker.port'] as number,
    advertisedHost: advertisedHost(values),
    dataDir: resolve(values['broker.data.dir'] as string),
    nodeId: values['node.id'] as number,
    config,
  };
}

/** Start the broker, or report why not (one clear line) and return undefined. */
export async function startEmbeddedBroker(
  ctx: CliContext,
  values: Record<string, unknown>,
): Promise<RunningBroker | undefined> {
  const options = brokerOptions(values);
  try {
    const broker = await ctx.startBroker(options);
    ctx.err(
      `broker listening on ${broker.host}:${broker.port} (advertised as ${options.advertisedHost}), data in ${options.dataDir}`,
    );
    return broker;
  } catch (e) {
    ctx.err(
      `error: the broker failed to start on ${options.host}:${options.port}: ${(e as Error).message}`,
    );
    return undefined;
  }
}

export type BrokerStart =
  /** `bootstrapServers` is how clients in this process reach it (its advertised address). */
  | { state: 'running'; broker: RunningBroker; bootstrapServers: string }
  | { state: 'failed' }
  /** A signal arrived while it was starting, so it was stopped again at once. */
  | { state: 'interrupted' };

/**
 * The context for a broker embedded in a worker process: the process default starts
 * the broker on the calling thread (right for `connect broker`); next to a worker it
 * gets a thread of its own, so broker I/O and connector work use both cores. A
 * test's injected starter is kept as it is.
 */
export function withBrokerThread(ctx: CliContext): CliContext {
  return ctx.startBroker === startBroker ? { ...ctx, startBroker: startBrokerThread } : ctx;
}

/**
 * Start the broker and register it with the process's shutdown path, which stops it
 * after everything started later.
 */
export async function startRegisteredBroker(
  ctx: CliContext,
  values: Record<string, unknown>,
  shutdown: Shutdown,
  name: string,
): Promise<BrokerStart> {
  const broker = await startEmbeddedBroker(ctx, values);
  if (!broker) return { state: 'failed' };
  if (shutdown.isShuttingDown) {
    await broker.stop();
    return { state: 'interrupted' };
  }
  shutdown.register(name, () => broker.stop());
  // The real port, which differs from broker.port when that is 0.
  return { state: 'running', broker, bootstrapServers: `${advertisedHost(values)}:${broker.port}` };
}

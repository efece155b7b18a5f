/**
 * The ports `connect demo` is about to listen on, checked before anything starts, so a
 * taken port is one clear line naming the key to change, not a failure halfway through
 * start-up (Postgres' log, or the broker's bind error after Postgres is already up).
 * Each port is bound and released at once; port 0 (any free port) needs no check.
 */
import { createServer } from 'node:net';
import { embedsBroker, restListeners } from '../../config/worker-config.ts';
import { DEMO_PREFIX, type DemoSettings, demoPaths } from './demo-config.ts';

interface PortUse {
  key: string;
  host: string;
  port: number;
  /** What to do about it. */
  hint: string;
}

export function portsToCheck(settings: DemoSettings, worker: Record<string, unknown>): PortUse[] {
  const ports: PortUse[] = [
    {
      key: `${DEMO_PREFIX}postgres.port`,
      host: '127.0.0.1',
      port: settings.postgresPort,
      hint: `another demo may be running (a Postgres left by a killed demo has its pid in ${demoPaths(settings.dir).postgres}/postmaster.pid); or choose another port with -o ${DEMO_PREFIX}postgres.port=<port>`,
    },
  ];
  if (embedsBroker(worker)) {
    ports.push({
      key: 'broker.port',
      host: worker['broker.host'] as string,
      port: worker['broker.port'] as number,
      hint: 'another demo, worker or Kafka may be running; or choose another port with -o broker.port=<port>',
    });
  }
  for (const listener of restListeners(worker)) {
    try {
      const url = new URL(listener);
      ports.push({
        key: 'listeners',
        host: url.hostname.replace(/^\[|\]$/g, '') || '0.0.0.0',
        port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
        hint: `another demo or worker may be running; or choose another port with -o listeners=${url.protocol}//${url.hostname}:<port>`,
      });
    } catch {
      // the worker's own validation names a malformed listener
    }
  }
  return ports.filter((p) => p.port !== 0);
}

/** Messages for the ports something else listens on (bound and released at once). */
export async function portsInUse(ports: PortUse[]): Promise<string[]> {
  const messages: string[] = [];
  for (const { key, host, port, hint } of ports) {
    const error = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
      const server = createServer();
      server.once('error', (e) => resolve(e as NodeJS.ErrnoException));
      server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(undefined)));
    });
    if (error?.code === 'EADDRINUSE') {
      messages.push(`port ${port} on ${host} (${key}) is in use: ${hint}`);
    } else if (error) {
      messages.push(`cannot listen on ${host}:${port} (${key}): ${error.message}`);
    }
  }
  return messages;
}

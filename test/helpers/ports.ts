/**
 * Free TCP ports for services a test starts. The port is found by binding port 0 and
 * closing; another process could take it before the test's server binds, which on
 * a test machine is rare enough — servers that accept port 0 themselves (the broker's
 * broker.port=0) should use that instead and read the port back.
 */
import { createServer } from 'node:net';

export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error('could not read the port of a TCP listener'));
        return;
      }
      server.close(() => resolve(address.port));
    });
  });
}

/**
 * The encoder thread's side of encoder-thread.ts: says it is ready once its modules
 * are loaded, then encodes each requested file and sends its bytes back, the buffer
 * transferred rather than copied. Runs requests one at a time in arrival order; an
 * encoding error is sent back as the job's error, and the thread goes on.
 */
import { parentPort } from 'node:worker_threads';
import type { EncodeRequest, EncoderMessage } from './encoder-thread.ts';
import { encodeParquet } from './parquet-encoder.ts';

const port = parentPort;
if (port === null) throw new Error('encoder-thread-main.ts runs only as a worker thread');

port.on('message', (request: EncodeRequest) => {
  let bytes: Uint8Array;
  try {
    bytes = encodeParquet(
      { elements: request.elements, columns: request.names.map((name) => ({ name })) },
      request.columns,
      request.options,
    );
  } catch (e) {
    const reply: EncoderMessage = { id: request.id, error: (e as Error)?.message ?? String(e) };
    port.postMessage(reply);
    return;
  }
  const reply: EncoderMessage = { id: request.id, bytes };
  port.postMessage(reply, [bytes.buffer as ArrayBuffer]);
});

const ready: EncoderMessage = { ready: true };
port.postMessage(ready);

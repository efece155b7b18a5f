/** Calls a worker's REST API and answers the status and the parsed body. */
export async function rest(
  worker: { restUrl: string },
  method: string,
  path: string,
  body?: unknown,
  // biome-ignore lint/suspicious/noExplicitAny: REST bodies are checked field by field by the tests
): Promise<{ status: number; body: any }> {
  const response = await fetch(`${worker.restUrl}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? null : JSON.parse(text) };
}

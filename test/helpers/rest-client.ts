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

/**
 * Sends `text` as the body, unparsed (for bodies that are not valid JSON), with the
 * given content type, and answers like `rest`.
 */
export async function restText(
  worker: { restUrl: string },
  method: string,
  path: string,
  text: string,
  contentType = 'application/json',
  // biome-ignore lint/suspicious/noExplicitAny: REST bodies are checked field by field by the tests
): Promise<{ status: number; body: any }> {
  const response = await fetch(`${worker.restUrl}${path}`, {
    method,
    headers: { 'content-type': contentType },
    body: text,
  });
  const answer = await response.text();
  return { status: response.status, body: answer === '' ? null : JSON.parse(answer) };
}

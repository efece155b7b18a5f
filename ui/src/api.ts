/**
 * Requests of the page, all to its own origin with relative URLs: the page is at
 * <worker>/ui/, so `../connectors` is the REST API and `api/topics` the page's own
 * read-only API, whatever prefix a proxy puts in front. The browser sends the
 * credentials it holds for this origin (fetch's default), so REST authentication in a
 * proxy keeps working.
 */

/** A REST answer that is not 2xx, with Kafka Connect's `message` when it has one. */
export class ApiError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
  }
}

/** The REST API (Kafka Connect's paths), relative to the page. */
export const rest = (path: string): string => `..${path}`;

export async function request<T>(method: string, url: string, body?: unknown): Promise<T> {
  const response = await fetch(url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = text;
  }
  if (!response.ok) {
    const message =
      typeof parsed === 'object' && parsed !== null && 'message' in parsed
        ? String((parsed as { message: unknown }).message)
        : `${response.status} ${response.statusText}`;
    throw new ApiError(response.status, `${method} ${url}: ${message}`);
  }
  return parsed as T;
}

export const getJson = <T>(url: string): Promise<T> => request<T>('GET', url);

export async function getText(url: string): Promise<string> {
  const response = await fetch(url);
  if (!response.ok) throw new ApiError(response.status, `GET ${url}: ${response.status}`);
  return response.text();
}

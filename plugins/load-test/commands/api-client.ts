// How `coord load start|stop|users|status` reach the orchestrator's API.
import { environment, optionText } from '../../../entries/plugin.ts';
import { ApiError, InputError } from '../errors.ts';

export async function apiCall(options: Readonly<Record<string, unknown>>, method: string, path: string, body?: unknown): Promise<unknown> {
  const base = optionText(options.api) ?? 'http://127.0.0.1:8089';
  let url: URL;
  try {
    url = new URL(path, base);
  } catch {
    throw new InputError(`--api "${base}" is not a URL: expected e.g. http://127.0.0.1:8089`);
  }
  const token = optionText(options.token) ?? environment().LOAD_TEST_TOKEN;
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; errors?: { code?: string }[]; message?: string } }).cause;
    const why = cause?.code ?? cause?.errors?.[0]?.code ?? cause?.message ?? (err as Error).message;
    throw new ApiError(`cannot reach the load-test orchestrator at ${url.origin} (${why}): start one with coord run --plugin load-test, or pass --api`, {
      code: 'COORD_ERR_LOAD_TEST_API_UNREACHABLE',
      cause: err,
    });
  }
  const data = (await res.json().catch(() => ({}))) as { error?: string };
  const why = `orchestrator at ${url.origin}: ${data.error ?? `HTTP ${res.status}`}`;
  if (res.status === 400) throw new InputError(why);
  if (!res.ok) throw new ApiError(why, { code: res.status === 409 ? 'COORD_ERR_LOAD_TEST_CONFLICT' : res.status === 403 ? 'COORD_ERR_LOAD_TEST_FORBIDDEN' : 'COORD_ERR_LOAD_TEST_API' });
  return data;
}

// The typed HTTP client: openapi-fetch over the generated OpenAPI paths, with the session's CSRF
// header on writes and one error type for every non-2xx answer.
import createClient, { type Middleware } from "openapi-fetch";
import type { paths } from "./schema";

export const CSRF_COOKIE = "chatmem_csrf";

export function csrfToken(cookie: string = document.cookie): string {
  const m = cookie.match(new RegExp(`(?:^|; )${CSRF_COOKIE}=([^;]*)`));
  return m ? decodeURIComponent(m[1]) : "";
}

/** A non-2xx answer: the server's `{"error": {code, message, details}}`, or the HTTP status. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: unknown;
  constructor(status: number, code: string, message: string, details?: unknown) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

/** An ApiError from a status and a parsed body (the server's error envelope, or anything). */
export function errorFromBody(status: number, body: unknown, statusText = ""): ApiError {
  const e = (body as { error?: { code?: string; message?: string; details?: unknown } } | null)
    ?.error;
  const code = e?.code || `http_${status}`;
  return new ApiError(status, code, e?.message || statusText || code, e?.details);
}

/** Build an ApiError from a Response (reads its body). */
export async function errorFrom(res: Response): Promise<ApiError> {
  let body: unknown = null;
  try {
    body = await res.json();
  } catch {
    /* not JSON */
  }
  return errorFromBody(res.status, body, res.statusText);
}

type Listener = () => void;
const unauthorizedListeners = new Set<Listener>();

/** Called when any request answers 401 (the session ended): the app shows the login page. */
export function onUnauthorized(fn: Listener): () => void {
  unauthorizedListeners.add(fn);
  return () => unauthorizedListeners.delete(fn);
}

export function writeHeaders(method: string, headers: Headers): void {
  if (!["GET", "HEAD", "OPTIONS"].includes(method.toUpperCase())) {
    const token = csrfToken();
    if (token && !headers.has("X-CSRF-Token")) headers.set("X-CSRF-Token", token);
  }
}

const session: Middleware = {
  onRequest({ request }) {
    writeHeaders(request.method, request.headers);
    return request;
  },
  onResponse({ response, request }) {
    if (response.status === 401 && !new URL(request.url).pathname.startsWith("/api/auth/")) {
      unauthorizedListeners.forEach((fn) => fn());
    }
    return response;
  },
};

export const http = createClient<paths>({ baseUrl: "", credentials: "same-origin" });
http.use(session);

/** Unwrap an openapi-fetch result: the typed data, or throw the ApiError. */
export async function unwrap<D>(
  p: Promise<{ data?: D; error?: unknown; response: Response }>,
): Promise<D> {
  const { data, error, response } = await p;
  if (!response.ok) throw errorFromBody(response.status, error, response.statusText);
  return data as D;
}

/** A raw fetch with the same session handling (for SSE streams). */
export async function rawFetch(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  writeHeaders(init.method || "GET", headers);
  const res = await fetch(path, { ...init, headers, credentials: "same-origin" });
  if (res.status === 401) unauthorizedListeners.forEach((fn) => fn());
  return res;
}

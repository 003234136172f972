// A section's query state: the "admins only" notice on a 403 (the server refused), the error
// otherwise, nothing while loading.
import type { UseQueryResult } from "@tanstack/react-query";
import { ApiError } from "../api/client";
import { errorText, useT } from "../i18n";
import { AdminOnly } from "./AdminPage";

export function Guard<D>({ q, children }: { q: UseQueryResult<D>; children: (d: D) => React.ReactNode }) {
  const t = useT();
  if (q.error instanceof ApiError && q.error.status === 403) return <AdminOnly />;
  if (q.error)
    return (
      <p className="form-error" role="alert">
        {q.error instanceof ApiError ? errorText(t, q.error.code, q.error.message) : String(q.error)}
      </p>
    );
  return q.data === undefined ? null : <>{children(q.data)}</>;
}

// Small helpers shared by the settings, companion and admin screens.
import { ApiError } from "../api/client";
import { errorText, type T } from "../i18n";
import { toast } from "../ui/toast";

/** A failed call as a toast in the user's words. */
export function fail(t: T, e: unknown): void {
  toast(e instanceof ApiError ? errorText(t, e.code, e.message) : String(e), "error");
}

/** An epoch-ms time as the browser's local date and time. */
export function when(ms: number): string {
  return new Date(ms).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

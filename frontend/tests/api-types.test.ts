// @vitest-environment node
// The checked-in API types must be what openapi-typescript makes of the checked-in OpenAPI
// document (`make web-api` regenerates both; tests/test_web_api_types.py checks the document
// against the live app).
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import openapiTS, { astToString } from "openapi-typescript";
import { describe, expect, it } from "vitest";

describe("src/api/schema.d.ts", () => {
  it("is generated from openapi.json (run `make web-api` when this fails)", async () => {
    const doc = JSON.parse(readFileSync(resolve(__dirname, "../openapi.json"), "utf8"));
    const fresh = astToString(await openapiTS(doc, { defaultNonNullable: false }));
    const checked = readFileSync(resolve(__dirname, "../src/api/schema.d.ts"), "utf8");
    const body = (s: string) => s.replace(/^\/\*\*[\s\S]*?\*\/\s*/, "").trim();
    expect(body(checked)).toBe(body(fresh));
  }, 30_000);
});

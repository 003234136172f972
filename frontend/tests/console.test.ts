// The persona editor's limits are the agent contract's (from the checked-in OpenAPI document),
// and the page capture paints the page without the report dialog.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { PERSONA_FIELDS, STATUSES, VISIBILITIES } from "../src/companions/fields";
import { paintViewport } from "../src/report/capture";

type Prop = { maxLength?: number; anyOf?: { maxLength?: number; enum?: string[] }[]; enum?: string[] };
const doc = JSON.parse(readFileSync(resolve(__dirname, "../openapi.json"), "utf8"));
const agentIn: Record<string, Prop> = doc.components.schemas.AgentIn.properties;

function maxOf(p: Prop): number | undefined {
  return p.maxLength ?? p.anyOf?.find((a) => a.maxLength)?.maxLength;
}

describe("persona fields", () => {
  it("cover every text field of AgentIn with its limit", () => {
    const choices = new Set(["visibility", "status"]);
    const text = Object.keys(agentIn).filter((k) => !choices.has(k));
    expect(PERSONA_FIELDS.map((f) => f.name).sort()).toEqual(text.sort());
    for (const f of PERSONA_FIELDS) expect([f.name, f.max]).toEqual([f.name, maxOf(agentIn[f.name])]);
  });
  it("offer the contract's choices", () => {
    expect([...VISIBILITIES]).toEqual(agentIn.visibility.enum);
    expect([...STATUSES]).toEqual(agentIn.status.enum);
  });
});

describe("page capture", () => {
  it("paints the page's text but not the report dialog", () => {
    document.body.innerHTML =
      '<main><h1>Hello</h1></main><dialog open class="report-dialog"><p>secret draft</p></dialog>';
    const painted: string[] = [];
    const ctx = new Proxy(
      {},
      {
        get: (_t, k) => (k === "fillText" ? (s: string) => painted.push(s) : () => undefined),
        set: () => true,
      },
    );
    const canvas = { getContext: () => ctx } as unknown as HTMLCanvasElement;
    // jsdom lays nothing out: give every word a box
    Range.prototype.getBoundingClientRect = () => ({ left: 1, top: 1, width: 10, height: 10, bottom: 11, right: 11 }) as DOMRect;
    paintViewport(canvas);
    expect(painted).toContain("Hello");
    expect(painted).not.toContain("secret");
  });
});

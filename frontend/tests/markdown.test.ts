import { describe, expect, it } from "vitest";
import { renderMarkdown } from "../src/markdown/render";

function dom(md: string): HTMLElement {
  const el = document.createElement("div");
  el.innerHTML = renderMarkdown(md);
  return el;
}

describe("renderMarkdown", () => {
  it("renders headings, lists, tables and highlighted code with a copy button", () => {
    const el = dom("# Title\n\n- a\n- b\n\n| x | y |\n|---|---|\n| 1 | 2 |\n\n```python\ndef f():\n    return 1\n```\n");
    expect(el.querySelector("h1")?.textContent).toBe("Title");
    expect(el.querySelectorAll("li")).toHaveLength(2);
    expect(el.querySelector("table td")?.textContent).toBe("1");
    const code = el.querySelector(".code-block code");
    expect(code?.className).toContain("language-python");
    expect(code?.querySelector(".hljs-keyword")?.textContent).toBe("def");
    expect(el.querySelector(".code-block button[data-copy-code]")).not.toBeNull();
  });

  it("never lets raw HTML or event handlers through", () => {
    const el = dom('<img src=x onerror="window.__pwned=1"> <script>window.__pwned=2</script> <b onclick="x()">b</b>');
    expect(el.querySelector("img")).toBeNull();
    expect(el.querySelector("script")).toBeNull();
    expect(el.querySelector("[onerror],[onclick]")).toBeNull();
    expect(el.textContent).toContain("<img src=x onerror=");
    expect((window as unknown as { __pwned?: number }).__pwned).toBeUndefined();
  });

  it("refuses javascript:, vbscript: and data: links; real links open safely in a new tab", () => {
    const el = dom("[a](javascript:alert(1)) [b](JAVASCRIPT:alert(1)) [c](vbscript:x) [d](data:text/html,x) [ok](https://example.com)");
    const links = [...el.querySelectorAll("a")];
    expect(links.map((a) => a.getAttribute("href"))).toEqual(["https://example.com"]);
    expect(links[0].getAttribute("target")).toBe("_blank");
    expect(links[0].getAttribute("rel")).toContain("noopener");
  });

  it("autolinks bare URLs safely and escapes code", () => {
    const el = dom("see https://example.org/x and `<b>not bold</b>`\n\n```\n<script>alert(1)</script>\n```");
    expect(el.querySelector("a")?.getAttribute("href")).toBe("https://example.org/x");
    expect(el.querySelector("b")).toBeNull();
    expect(el.querySelector("script")).toBeNull();
    expect(el.textContent).toContain("<script>alert(1)</script>");
  });

  it("drops inline styles and images with javascript: sources", () => {
    const el = dom('![x](javascript:alert(1)) ![y](https://example.com/a.png "t")');
    const imgs = [...el.querySelectorAll("img")];
    expect(imgs.map((i) => i.getAttribute("src"))).toEqual(["https://example.com/a.png"]);
    expect(el.querySelector("[style]")).toBeNull();
  });
});

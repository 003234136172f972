// A screenshot of the page drawn in the browser with no library: the visible DOM is painted on a
// canvas from its layout and computed styles — backgrounds, borders, text word by word, form
// values and same-origin images — clipped by scrolling containers. It is an approximation (no
// shadows, gradients or icons), which is all a problem report needs. Not an SVG <foreignObject>:
// a data:/blob: document inherits the page's CSP, which refuses its inline styles.
// The report dialog itself is left out; nothing leaves the browser until the user sends it.

const SKIP_TAGS = new Set(["SCRIPT", "STYLE", "TEMPLATE", "NOSCRIPT", "svg"]);

function visibleColour(c: string): boolean {
  return !!c && c !== "transparent" && !/rgba\([^)]*,\s*0\)$/.test(c);
}

function paintBox(ctx: CanvasRenderingContext2D, el: Element, r: DOMRect, cs: CSSStyleDeclaration): void {
  if (visibleColour(cs.backgroundColor)) {
    ctx.fillStyle = cs.backgroundColor;
    ctx.fillRect(r.left, r.top, r.width, r.height);
  }
  const bw = parseFloat(cs.borderTopWidth) || 0;
  if (bw > 0 && cs.borderTopStyle !== "none" && visibleColour(cs.borderTopColor)) {
    ctx.strokeStyle = cs.borderTopColor;
    ctx.lineWidth = bw;
    ctx.strokeRect(r.left + bw / 2, r.top + bw / 2, r.width - bw, r.height - bw);
  }
  if (el instanceof HTMLImageElement && el.complete && el.naturalWidth > 0) {
    try {
      ctx.drawImage(el, r.left, r.top, r.width, r.height);
    } catch {
      /* not drawable */
    }
  }
  if ((el instanceof HTMLInputElement && !["checkbox", "radio", "hidden"].includes(el.type)) || el instanceof HTMLTextAreaElement) {
    const text = el instanceof HTMLInputElement && el.type === "password" ? "•".repeat(el.value.length) : el.value;
    if (text) paintText(ctx, text.split("\n")[0], r.left + 8, r.top + r.height / 2, cs);
  }
}

function paintText(ctx: CanvasRenderingContext2D, text: string, x: number, midY: number, cs: CSSStyleDeclaration): void {
  ctx.font = `${cs.fontStyle} ${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
  ctx.fillStyle = cs.color;
  ctx.textBaseline = "middle";
  ctx.fillText(text, x, midY);
}

function paintWords(ctx: CanvasRenderingContext2D, node: Text, cs: CSSStyleDeclaration, budget: { words: number }): void {
  const text = node.data;
  const range = document.createRange();
  const re = /\S+/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) && budget.words-- > 0) {
    range.setStart(node, m.index);
    range.setEnd(node, m.index + m[0].length);
    const r = range.getBoundingClientRect();
    if (r.width && r.bottom >= 0 && r.top <= window.innerHeight) paintText(ctx, m[0], r.left, r.top + r.height / 2, cs);
  }
}

function paint(ctx: CanvasRenderingContext2D, el: Element, skip: string, budget: { words: number }): void {
  if (SKIP_TAGS.has(el.tagName) || el.matches(skip)) return;
  const cs = getComputedStyle(el);
  if (cs.display === "none" || cs.visibility === "hidden" || cs.opacity === "0") return;
  const r = el.getBoundingClientRect();
  const clips = cs.overflowX !== "visible" || cs.overflowY !== "visible";
  ctx.save();
  if (cs.opacity !== "1") ctx.globalAlpha *= parseFloat(cs.opacity) || 1;
  paintBox(ctx, el, r, cs);
  if (clips) {
    ctx.beginPath();
    ctx.rect(r.left, r.top, r.width, r.height);
    ctx.clip();
  }
  for (const child of Array.from(el.childNodes)) {
    if (child instanceof Text && child.data.trim()) paintWords(ctx, child, cs, budget);
    else if (child instanceof Element) paint(ctx, child, skip, budget);
  }
  ctx.restore();
}

/** Paint the viewport on a canvas (exported for the unit test). */
export function paintViewport(canvas: HTMLCanvasElement, skip = ".report-dialog"): void {
  const w = window.innerWidth;
  const h = window.innerHeight;
  canvas.width = w;
  canvas.height = h;
  const ctx = canvas.getContext("2d");
  if (!ctx) throw new Error("no canvas");
  const bg = getComputedStyle(document.body).backgroundColor;
  ctx.fillStyle = visibleColour(bg) ? bg : getComputedStyle(document.documentElement).backgroundColor || "#fff";
  ctx.fillRect(0, 0, w, h);
  paint(ctx, document.body, skip, { words: 20_000 });
}

/** A PNG of the viewport; rejects when the browser cannot make one. */
export async function captureViewport(): Promise<Blob> {
  const canvas = document.createElement("canvas");
  paintViewport(canvas);
  return await new Promise<Blob>((resolve, reject) =>
    canvas.toBlob((b) => (b ? resolve(b) : reject(new Error("no image"))), "image/png"),
  );
}

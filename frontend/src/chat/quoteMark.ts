// The quoted passages of an answer's inline threads, marked in its text with the CSS Custom
// Highlight API (no change to the rendered DOM, nothing for a screen reader to trip on: the
// "N threads" button is the way to a thread). Browsers without the API show no mark.

/**
 * Where `quote` is in `text`, whitespace ignored on both sides (a quote is the selection with its
 * whitespace folded, and the text between rendered paragraphs has none): [start, end) in `text`.
 */
export function findQuote(text: string, quote: string): [number, number] | null {
  const q = quote.replace(/\s+/g, "");
  if (!q) return null;
  let flat = "";
  const at: number[] = [];
  for (let i = 0; i < text.length; i++) {
    if (!/\s/.test(text[i])) {
      flat += text[i];
      at.push(i);
    }
  }
  const j = flat.indexOf(q);
  if (j < 0) return null;
  return [at[j], at[j + q.length - 1] + 1];
}

/** A DOM range over [start, end) of `root.textContent`. */
function rangeIn(root: Node, start: number, end: number): Range | null {
  const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  let pos = 0;
  let started = false;
  for (let n = walk.nextNode() as Text | null; n; n = walk.nextNode() as Text | null) {
    const len = n.data.length;
    if (!started && start < pos + len) {
      range.setStart(n, start - pos);
      started = true;
    }
    if (started && end <= pos + len) {
      range.setEnd(n, end - pos);
      return range;
    }
    pos += len;
  }
  return null;
}

export const QUOTE_HIGHLIGHT = "thread-quote";
let shared: Highlight | null = null;

function registry(): Highlight | null {
  if (typeof CSS === "undefined" || !("highlights" in CSS) || typeof Highlight === "undefined") return null;
  if (!shared) {
    shared = new Highlight();
    CSS.highlights.set(QUOTE_HIGHLIGHT, shared);
  }
  return shared;
}

/**
 * Mark the quotes in `root` (again whenever its content is re-rendered); the returned function
 * removes the marks.
 */
export function markQuotes(root: HTMLElement, quotes: string[]): () => void {
  const hl = registry();
  if (!hl || quotes.length === 0) return () => undefined;
  let ranges: Range[] = [];
  const mark = () => {
    ranges.forEach((r) => hl.delete(r));
    const text = root.textContent ?? "";
    ranges = quotes
      .map((q) => findQuote(text, q))
      .map((at) => (at ? rangeIn(root, at[0], at[1]) : null))
      .filter((r): r is Range => r !== null);
    ranges.forEach((r) => hl.add(r));
  };
  mark();
  const watch = new MutationObserver(mark);
  watch.observe(root, { childList: true, subtree: true, characterData: true });
  return () => {
    watch.disconnect();
    ranges.forEach((r) => hl.delete(r));
  };
}

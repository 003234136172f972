// Markdown → safe HTML: markdown-it (raw HTML off, javascript:/vbscript:/data: links refused by
// its validator), highlight.js for fenced code, then DOMPurify over the result as a second line
// of defence. Links open in a new tab without an opener; code blocks carry a copy button that the
// message component wires up by event delegation (no inline handlers: the CSP forbids them).
import DOMPurify from "dompurify";
import hljs from "highlight.js/lib/common";
import MarkdownIt from "markdown-it";

export interface MdLabels {
  copy: string;
  copyCode: string;
}

const DEFAULT_LABELS: MdLabels = { copy: "Copy", copyCode: "Copy code" };

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function build(labels: MdLabels): MarkdownIt {
  const md = new MarkdownIt({ html: false, linkify: true, breaks: false, typographer: false });
  md.renderer.rules.fence = (tokens, idx) => {
    const token = tokens[idx];
    const lang = (token.info || "").trim().split(/\s+/)[0]?.toLowerCase() || "";
    const code = token.content;
    let body: string;
    if (lang && hljs.getLanguage(lang)) {
      body = hljs.highlight(code, { language: lang, ignoreIllegals: true }).value;
    } else if (!lang && code.length < 20000) {
      body = hljs.highlightAuto(code).value;
    } else {
      body = escapeHtml(code);
    }
    const langLabel = lang ? `<span class="code-lang">${escapeHtml(lang)}</span>` : "<span></span>";
    return (
      `<div class="code-block"><div class="code-head">${langLabel}` +
      `<button type="button" class="copy-code" data-copy-code aria-label="${escapeHtml(labels.copyCode)}">` +
      `${escapeHtml(labels.copy)}</button></div>` +
      `<pre><code class="hljs${lang ? ` language-${escapeHtml(lang)}` : ""}">${body}</code></pre></div>`
    );
  };
  const defaultLink =
    md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
  md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
    tokens[idx].attrSet("target", "_blank");
    tokens[idx].attrSet("rel", "noopener noreferrer nofollow");
    return defaultLink(tokens, idx, options, env, self);
  };
  return md;
}

let purifyReady = false;
function purifier() {
  if (!purifyReady) {
    // every link that survives opens safely, whatever produced it
    DOMPurify.addHook("afterSanitizeAttributes", (node) => {
      if (node.tagName === "A") {
        node.setAttribute("target", "_blank");
        node.setAttribute("rel", "noopener noreferrer nofollow");
      }
    });
    purifyReady = true;
  }
  return DOMPurify;
}

const cache = new Map<string, MarkdownIt>();

/** Render Markdown to sanitised HTML. */
export function renderMarkdown(src: string, labels: MdLabels = DEFAULT_LABELS): string {
  const key = `${labels.copy}|${labels.copyCode}`;
  let md = cache.get(key);
  if (!md) {
    md = build(labels);
    cache.set(key, md);
  }
  const html = md.render(src);
  return purifier().sanitize(html, {
    ADD_ATTR: ["target", "data-copy-code"],
    FORBID_TAGS: ["style", "form", "input", "textarea", "select", "iframe", "object", "embed"],
    FORBID_ATTR: ["style"],
    ALLOW_DATA_ATTR: false,
  });
}

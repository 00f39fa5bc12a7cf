// HTML for the hosted pages. Every interpolated value is escaped unless it is already Html, so a
// value a caller posted (a name, a URL) can never become markup.

export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c]);

function render(value: unknown): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

/** Markup written by us (an attribute, a constant fragment), passed through unescaped. */
export const raw = (text: string): Html => new Html(text);

/** A template whose interpolations are escaped; arrays are joined, null/undefined/false vanish. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return new Html(out);
}

const STYLE = `
  body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; background: #f6f8fa; color: #1a1f36; margin: 0; }
  main { max-width: 560px; margin: 40px auto; background: #fff; border-radius: 8px; padding: 32px; box-shadow: 0 2px 8px rgba(0,0,0,.08); }
  h1 { font-size: 22px; margin-top: 0; }
  .banner { background: #fff8e1; border: 1px solid #f5d77a; border-radius: 4px; padding: 8px 12px; font-size: 13px; margin-bottom: 16px; }
  fieldset { border: 1px solid #e3e8ee; border-radius: 6px; margin: 0 0 16px; padding: 12px 16px; }
  legend { font-weight: 600; padding: 0 4px; }
  label { display: block; font-size: 13px; margin: 8px 0 2px; }
  input, select { width: 100%; box-sizing: border-box; padding: 6px 8px; border: 1px solid #c1c9d2; border-radius: 4px; font-size: 14px; }
  input[type=checkbox] { width: auto; }
  button { padding: 8px 14px; border-radius: 4px; border: 1px solid #635bff; background: #635bff; color: #fff; font-size: 14px; cursor: pointer; margin: 4px 4px 4px 0; }
  button.secondary { background: #fff; color: #635bff; }
  .errors { background: #fdecea; border: 1px solid #f5c2c0; border-radius: 4px; padding: 8px 12px; color: #8a1c14; }
  .muted { color: #697386; font-size: 13px; }
  pre { white-space: pre-wrap; word-break: break-word; background: #f6f8fa; border-radius: 4px; padding: 8px 12px; font-size: 13px; }
`;

/** A whole hosted page. `nonce` allows the page's own inline script under the CSP and nothing else. */
export function htmlDocument(options: { title: string; nonce: string; body: Html; script?: string }): Html {
  return pageShell({
    ...options,
    style: STYLE,
    body: html`<main>
<div class="banner">Sandbank test mode: nothing here is real, and no data leaves this sandbox.</div>
${options.body}
</main>`,
  });
}

/** The document around a page's body (the hosted pages' and the console's): its head, its style, its nonce'd script. */
export function pageShell(options: { title: string; nonce: string; style: string; body: Html; script?: string }): Html {
  const script = options.script ? new Html(`<script nonce="${escapeHtml(options.nonce)}">${options.script}</script>`) : '';
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<link rel="icon" href="data:,">
<title>${options.title}</title>
<style>${new Html(options.style)}</style>
</head>
<body>
${options.body}
${script}
</body>
</html>
`;
}

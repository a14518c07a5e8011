// Server-rendered pages: one layout, inline styles only (no external assets), text always escaped.
import { isScope, SCOPE_DESCRIPTIONS } from '../auth/principal';

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** A fragment of trusted markup; everything else interpolated through `html` is escaped. */
export class Html {
  constructor(readonly value: string) {}
  toString() {
    return this.value;
  }
}

export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ENTITIES[c]);
export const raw = (markup: string) => new Html(markup);

type Part = string | number | Html | null | undefined | false | Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return '';
  if (Array.isArray(part)) return part.map(render).join('');
  if (part instanceof Html) return part.value;
  return escapeHtml(String(part));
}

export function html(strings: TemplateStringsArray, ...parts: Part[]): Html {
  return new Html(strings.reduce((out, s, i) => out + s + (i < parts.length ? render(parts[i]) : ''), ''));
}

const STYLE = `
body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f5f5f7;color:#1d1d1f}
main{max-width:34rem;margin:3rem auto;padding:2rem;background:#fff;border-radius:8px;box-shadow:0 1px 3px rgba(0,0,0,.15)}
main.wide{max-width:60rem}
h1{font-size:1.5rem;margin-top:0}
label{display:block;margin:1rem 0 .25rem;font-weight:600}
input[type=email],input[type=password],input[type=text]{width:100%;box-sizing:border-box;padding:.5rem;font:inherit;border:1px solid #888;border-radius:4px}
button{font:inherit;padding:.5rem 1rem;margin:1rem .5rem 0 0;border-radius:4px;border:1px solid #0058b0;background:#0066cc;color:#fff;cursor:pointer}
button.secondary{background:#fff;color:#0058b0}
.error{color:#b00020;font-weight:600}
code{font-size:1.25rem;letter-spacing:.1em}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.4rem;border-bottom:1px solid #ddd;vertical-align:top}
td form{display:inline}td button{margin:0}
nav{display:flex;gap:1rem;align-items:center;flex-wrap:wrap}nav form{display:inline}
header nav{margin-bottom:1.5rem;padding-bottom:.5rem;border-bottom:1px solid #ddd}header nav button{margin:0}
nav a[aria-current=page]{font-weight:700;color:#1d1d1f}.narrow-only{display:none}.who{margin-left:auto;color:#555;overflow-wrap:anywhere}
h2{font-size:1.2rem;margin-top:2rem}h3{font-size:1rem;margin:1.5rem 0 .5rem}
.decision{border-left:3px solid #ddd;padding-left:.75rem}summary{cursor:pointer;margin-top:1.5rem}
td code,dd code,h3 code,li code{font-size:.9rem;letter-spacing:0}.long-id{overflow-wrap:anywhere}
pre{white-space:pre-wrap;word-break:break-word;background:#f5f5f7;padding:.5rem;margin:0;font-size:.9rem}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}dt{font-weight:600}dd{margin:0}
.filters{display:flex;gap:.5rem;align-items:end;flex-wrap:wrap;margin-bottom:1rem}.filters label{margin:0}.filters input{width:auto}
select{font:inherit;padding:.4rem;max-width:100%}form>select{display:block}small{display:block;color:#555;margin-bottom:.25rem}
fieldset{border:1px solid #ddd;border-radius:4px;margin-top:1rem}fieldset label{display:inline-block;font-weight:400;margin:.25rem 1rem .25rem 0}
textarea{width:100%;box-sizing:border-box;font:.9rem/1.4 monospace;padding:.5rem;border:1px solid #888;border-radius:4px}
dd form{display:inline}dd button{margin:0 0 0 .5rem;padding:.1rem .6rem}
.event{overflow-wrap:anywhere}.event p{margin:0 0 .35rem;white-space:pre-wrap}.event>:last-child{margin-bottom:0}.event pre.command{margin-bottom:.25rem}
.event summary{margin:0}.event details pre{margin-top:.25rem}.event details[open]{margin-bottom:.25rem}.call-id{color:#555;font-size:.85rem}
@media (max-width:40rem){main{margin:0;border-radius:0;padding:1rem;box-sizing:border-box;max-width:100%;overflow-wrap:anywhere}
header nav{gap:.1rem .8rem;font-size:.9rem;line-height:1.4}header nav button{padding:.15rem .6rem}.who{margin-left:0}.wide-only{display:none}.narrow-only{display:inline}
table,tbody,tr,td{display:block}thead{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%)}
tr{border-bottom:1px solid #ddd;padding:.4rem 0}td{border:0;padding:.15rem 0}td[data-label]:not([data-label=""])::before{content:attr(data-label);margin-right:.5rem;font-size:.85rem;font-weight:600;color:#555}
dl{grid-template-columns:1fr;gap:0}dd{margin-bottom:.5rem}}
`;

export function page(title: string, body: Html, { wide = false } = {}): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Flows</title>
<style>${STYLE}</style>
</head>
<body>
<main${wide ? ' class="wide"' : ''}>
${body.value}
</main>
</body>
</html>`;
}

export function scopeList(scopes: string[]): Html {
  return html`<ul>${scopes.map((s) => html`<li><strong>${s}</strong> — ${(isScope(s) ? SCOPE_DESCRIPTIONS[s] : s)}</li>`)}</ul>`;
}

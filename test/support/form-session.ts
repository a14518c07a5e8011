// A browser without a browser: a cookie jar and form posts over real HTTP, following redirects within
// the origin, for flows that need an owner's clicks (device approval, consent) in `npm test`.
export interface PageResult {
  status: number;
  url: string;
  text: string;
  location: string | null;
}

export class FormSession {
  private readonly cookies = new Map<string, string>();

  constructor(
    readonly origin: string,
    cookieHeader?: string,
  ) {
    for (const pair of cookieHeader?.split(';') ?? []) this.setCookie(pair);
  }

  private setCookie(setCookie: string) {
    const [pair, ...attributes] = setCookie.split(';');
    const eq = pair.indexOf('=');
    if (eq < 1) return;
    const name = pair.slice(0, eq).trim();
    const expired = attributes.some((a) => /^\s*expires=/i.test(a) && new Date(a.split('=')[1]).getTime() < Date.now()) || attributes.some((a) => /^\s*max-age=0/i.test(a));
    if (expired) this.cookies.delete(name);
    else this.cookies.set(name, pair.slice(eq + 1).trim());
  }

  cookie(name: string): string | undefined {
    return this.cookies.get(name);
  }

  /** One request; redirects are followed (as GET) while they stay on this origin, like a browser. */
  async request(path: string, { method = 'GET', form }: { method?: string; form?: Record<string, string> } = {}): Promise<PageResult> {
    let url = new URL(path, this.origin);
    let init: { method: string; body?: string } = { method, body: form ? new URLSearchParams(form).toString() : undefined };
    for (let hop = 0; hop < 10; hop++) {
      const res = await fetch(url, {
        method: init.method,
        body: init.body,
        redirect: 'manual',
        headers: {
          cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
          origin: this.origin,
          ...(init.body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
      });
      for (const value of res.headers.getSetCookie()) this.setCookie(value);
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location) {
        const next = new URL(location, url);
        if (next.origin !== this.origin) return { status: res.status, url: url.href, text: await res.text(), location: next.href };
        url = next;
        init = { method: 'GET' };
        continue;
      }
      const text = await res.text();
      // A page that submits its own form on load (OAuth's form_post) is submitted, as a browser would.
      if (res.status === 200 && text.includes('document.forms[0].submit()')) return this.submit(text);
      return { status: res.status, url: url.href, text, location };
    }
    throw new Error(`too many redirects from ${path}`);
  }

  /** Submits the form with `id` (or the first form) found in `html`, its hidden fields plus `extra`. */
  async submit(html: string, extra: Record<string, string> = {}, id?: string): Promise<PageResult> {
    const forms = [...html.matchAll(/<form([^>]*)>([\s\S]*?)<\/form>/g)];
    const match = id ? forms.find((f) => f[1].includes(`id="${id}"`)) : forms[0];
    if (!match) throw new Error(`no form ${id ?? ''} on the page`);
    const action = /action="([^"]*)"/.exec(match[1])?.[1] ?? '';
    const fields: Record<string, string> = {};
    for (const input of match[2].matchAll(/<input([^>]*)>/g)) {
      const name = /name="([^"]*)"/.exec(input[1])?.[1];
      const value = /value="([^"]*)"/.exec(input[1])?.[1] ?? '';
      if (name) fields[name] = value.replace(/&amp;/g, '&').replace(/&quot;/g, '"');
    }
    return this.request(action.replace(/&amp;/g, '&'), { method: 'POST', form: { ...fields, ...extra } });
  }
}

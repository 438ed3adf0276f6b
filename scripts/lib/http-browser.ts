/**
 * A browser as far as HTTP goes, for sign-in flows: it keeps cookies (by name, for every 127.0.0.1
 * port at once, as a browser keeps them per host), follows redirects one by one so a test can see
 * each, and submits a page's form.
 */
export interface Visit {
  readonly status: number;
  readonly url: string;
  readonly location: string | undefined;
  readonly body: string;
  readonly headers: Headers;
}

export class HttpBrowser {
  readonly cookies = new Map<string, string>();

  /** One request, no redirect followed; cookies sent and kept. */
  async request(url: string, init: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<Visit> {
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await fetch(url, {
      method: init.method ?? 'GET',
      redirect: 'manual',
      headers: { ...(cookie ? { cookie } : {}), ...init.headers },
      ...(init.body === undefined ? {} : { body: init.body }),
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (value === '' || /max-age=0\b/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const location = response.headers.get('location') ?? undefined;
    return {
      status: response.status,
      url,
      location: location === undefined ? undefined : new URL(location, url).href,
      body: await response.text(),
      headers: response.headers,
    };
  }

  /** Follows redirects from `url` until a page answers (at most 10). */
  async open(url: string, init: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<Visit> {
    let visit = await this.request(url, init);
    for (let hops = 0; visit.location !== undefined && visit.status >= 300 && visit.status < 400; hops += 1) {
      if (hops === 10) throw new Error(`more than 10 redirects from ${url}`);
      visit = await this.request(visit.location);
    }
    return visit;
  }

  /** Fills the page's form (its action, relative to the page) with `fields` and submits it, following redirects. */
  submit(page: Visit, fields: Record<string, string>): Promise<Visit> {
    const action = /<form[^>]*action="([^"]+)"/.exec(page.body)?.[1];
    if (action === undefined) throw new Error(`no form on ${page.url}: ${page.body.slice(0, 200)}`);
    return this.open(new URL(action.replace(/&amp;/g, '&'), page.url).href, {
      method: 'POST',
      body: new URLSearchParams(fields).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
  }
}

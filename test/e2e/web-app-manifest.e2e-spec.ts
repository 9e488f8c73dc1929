/**
 * The inbox as an installable web app: its manifest and service worker at the site's root (the worker's scope is
 * its folder), each revalidated on every load, and a page CSP that lets this origin's worker and manifest in.
 */
import { startTestServer, TestServer } from '../support/server';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});

afterAll(() => server?.stop());

describe('the web app manifest and service worker', () => {
  it('serves the manifest at the root: Tollgate, standalone on /, with PNG icons of 192 and 512 pixels', async () => {
    const res = await fetch(`${server.url}/manifest.webmanifest`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/manifest+json; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const manifest = await res.json();
    expect(manifest).toMatchObject({ id: '/', name: 'Tollgate', start_url: '/', scope: '/', display: 'standalone' });
    const pngs = manifest.icons.filter((i: { type: string }) => i.type === 'image/png');
    expect(pngs.map((i: { sizes: string; purpose: string }) => `${i.sizes} ${i.purpose}`)).toEqual([
      '192x192 any',
      '512x512 any',
      '512x512 maskable',
    ]);
    for (const icon of pngs) {
      const png = await fetch(`${server.url}${icon.src}`);
      expect(png.headers.get('content-type')).toBe('image/png');
      const body = Buffer.from(await png.arrayBuffer());
      expect(body.subarray(1, 4).toString('ascii')).toBe('PNG');
      const side = Number(icon.sizes.split('x')[0]);
      expect([body.readUInt32BE(16), body.readUInt32BE(20)]).toEqual([side, side]); // IHDR width and height
    }
    const page = await (await fetch(`${server.url}/`)).text();
    expect(page).toContain('<link rel="manifest" href="/manifest.webmanifest" />');
  });

  it('serves the worker at /sw.js as JavaScript, revalidated, under the same strict CSP', async () => {
    const res = await fetch(`${server.url}/sw.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await res.text()).toContain('notificationclick');
    const again = await fetch(`${server.url}/sw.js`, { headers: { 'if-none-match': res.headers.get('etag')! } });
    expect(again.status).toBe(304);
  });

  it("lets the page load this origin's worker and manifest, and nothing from elsewhere", async () => {
    const csp = (await fetch(`${server.url}/`)).headers.get('content-security-policy') ?? '';
    expect(csp).toContain("worker-src 'self'");
    expect(csp).toContain("manifest-src 'self'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
  });
});

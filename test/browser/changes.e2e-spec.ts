/**
 * Pending changes of the control plane in the web inbox (governance: four eyes), in real headless Chromium
 * against the real service: a policy change Ann proposed shows above the approvals; Ann sees that she waits for
 * another admin (no Approve button); Bob approves it in his inbox and the policy changes; the list updates live.
 */
import type { Browser } from 'playwright-core';
import { client } from '../support/http';
import { describeBrowser, launchBrowser, openPage, waitLive } from '../support/browser';
import { startTestServer, TestServer } from '../support/server';

let server: TestServer;
let http: ReturnType<typeof client>;
let browser: Browser;
let ann: string;
let bob: string;
const GOVERNED = { governance: { quorum: 2 }, rules: [{ match: '*', level: 'confirm' }] };

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchBrowser()]);
  http = client(server.url);
  ann = await server.token('ann', ['admin'], { name: 'Ann' });
  bob = await server.token('bob', ['admin'], { name: 'Bob' });
  expect((await http.put('/v1/policy', ann, GOVERNED)).status).toBe(200);
}, 90_000); // a server and a browser starting on a busy 2-core machine

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describeBrowser('pending changes in the inbox', () => {
  it('shows the proposer whom they wait for, and lets another admin approve: the policy changes', async () => {
    const held = await http.put('/v1/policy', ann, { ...GOVERNED, rules: [] });
    expect(held.status).toBe(202);
    const id = held.body.pendingChange.id;

    const mine = (await openPage(browser, { token: ann })).page;
    await mine.goto(`${server.url}/`);
    await waitLive(mine);
    const asAnn = mine.locator(`li[data-change-id="${id}"]`);
    await asAnn.waitFor();
    await expect(asAnn.getByTestId('change-waiting').textContent()).resolves.toMatch(/another admin must approve it/);
    expect(await asAnn.getByRole('button', { name: 'Approve' }).count()).toBe(0);

    const theirs = (await openPage(browser, { token: bob })).page;
    await theirs.goto(`${server.url}/`);
    await waitLive(theirs);
    const asBob = theirs.locator(`li[data-change-id="${id}"]`);
    await asBob.getByRole('button', { name: 'Approve' }).click();
    await expect(theirs.getByTestId('changes-note').textContent()).resolves.toMatch(/Approved and applied/);
    await asAnn.waitFor({ state: 'detached' }); // Ann's list follows the live stream
    expect((await http.get('/v1/policy', ann)).body.rules).toEqual([]);
    const change = (await http.get(`/v1/changes/${id}`, ann)).body;
    expect(change).toMatchObject({ status: 'applied', approvals: [{ by: { id: 'ann' } }, { by: { id: 'bob' } }] });
  });
});

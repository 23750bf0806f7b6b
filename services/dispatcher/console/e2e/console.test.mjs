// The console in headless Chromium against a running platform (locust/tests/test_console.py starts
// it and passes where it runs by environment). One browser, the steps in order, as a user goes:
// the admin creates an app, uploads credentials, rotates its key; the app owner registers devices
// through the API, sends test pushes from the console and follows them to sent and delivered;
// hostile strings (token, title, body, data, app name) are shown as text and never run.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { chromium } from 'playwright-core';

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (locust/tests/test_console.py sets it)`);
  return value;
};
const BASE = env('HERALD_URL');
const SHOTS = env('HERALD_SCREENSHOTS');
const DEADLINE_MS = 60_000;
// Each hostile string tries to run script by setting window.__xss; the console must show it as text.
const HOSTILE_TITLE = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>';
const HOSTILE_TOKEN = '"><svg/onload=window.__xss=3>';
const HOSTILE_NAME = '</title><script>window.__xss=4</script>';

let browser;
let page;
const dialogs = [];
const app = { id: `console-${Date.now().toString(36)}`, keys: [] };

async function shot(name, target = page) {
  await target.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });
}

async function api(method, path, key, body) {
  const response = await fetch(`${BASE}${path}`, {
    method, headers: { Authorization: `Bearer ${key}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: response.status, json: await response.json().catch(() => null) };
}

async function noScriptRan() {
  assert.equal(await page.evaluate(() => window.__xss), undefined, 'a hostile string ran as script');
  assert.deepEqual(dialogs.filter((d) => d.type() !== 'confirm').map((d) => d.message()), []);
}

async function signInAsApp(appId, key) {
  await page.goto(`${BASE}/console/`);
  await page.getByLabel('App id').fill(appId);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in with the API key' }).click();
  await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
}

async function signOut() {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
}

/** Sends a test push from the Send page; returns the message id the console links to. */
async function sendFromConsole(fields) {
  await page.getByRole('link', { name: 'Send a test push' }).click();
  await page.getByLabel('Send to').selectOption(fields.kind ?? 'devices');
  await page.getByLabel('Device id or topic').fill(fields.target);
  await page.getByLabel('Title').fill(fields.title ?? '');
  await page.getByLabel('Body').fill(fields.body ?? '');
  if (fields.data) await page.getByLabel('Data').fill(fields.data);
  if (fields.sendAt) await page.getByLabel('Send at (optional)').fill(fields.sendAt);
  const preview = await page.locator('pre.preview').textContent();
  assert.ok(preview.includes(JSON.stringify(fields.target)), `the preview shows the request: ${preview}`);
  if (fields.providers) await previewProviders(fields.providers);
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  const link = page.locator('p.ok a');
  await link.waitFor();
  return link.textContent();
}

/** Asks for the providers' preview; checks each channel's payload shows the title as text (JSON-escaped). */
async function previewProviders({ channels, title, target }) {
  await page.getByRole('button', { name: 'Preview what providers receive' }).click();
  for (const channel of channels) {
    const body = page.locator(`pre[data-part="${channel}-body"]`);
    await body.waitFor();
    const text = await body.textContent();
    assert.ok(text.includes(JSON.stringify(title)), `the ${channel} preview shows the title as text: ${text}`);
  }
  if (target) assert.equal(await page.getByRole('region', { name: `${channels[0]} preview` }).locator('code').textContent(), target);
  await shot('send-preview');
}

async function awaitState(state) {
  await page.locator(`.badge.state-${state}`).first().waitFor({ timeout: DEADLINE_MS });
}

before(async () => {
  mkdirSync(SHOTS, { recursive: true });
  browser = await chromium.launch({
    executablePath: process.env.HERALD_CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  page.on('dialog', (dialog) => { dialogs.push(dialog); void dialog.accept(); });
  page.on('pageerror', (error) => { throw error; });
});

after(async () => {
  await browser?.close();
});

test('the pages carry a strict Content-Security-Policy and keep no key in storage or the address', async () => {
  const response = await page.goto(`${BASE}/console/`);
  const policy = response.headers()['content-security-policy'];
  assert.match(policy, /script-src 'self'/);
  assert.doesNotMatch(policy, /unsafe-inline|unsafe-eval/);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await shot('sign-in');
});

test('the admin creates an app, sees its key once, uploads FCM and APNs credentials', async () => {
  await page.getByLabel('Admin token').fill(env('HERALD_ADMIN_TOKEN'));
  await page.getByRole('button', { name: 'Sign in as admin' }).click();
  await page.getByRole('heading', { name: 'Apps', level: 1 }).waitFor();
  await page.getByLabel('App id').first().fill(app.id);
  await page.getByLabel('Name').fill(HOSTILE_NAME);
  await page.getByRole('button', { name: 'Create' }).click();
  const issued = page.getByLabel(`New API key for ${app.id}`);
  await issued.waitFor();
  app.keys.push(await issued.inputValue());
  assert.match(app.keys[0], /^hk_/);
  assert.ok(await page.getByText(HOSTILE_NAME).isVisible(), 'the hostile app name is shown as text');

  await page.getByLabel('Service-account JSON').setInputFiles(env('HERALD_FCM_FILE'));
  await page.locator('form', { has: page.getByLabel('Service-account JSON') }).getByRole('button', { name: 'Upload' }).click();
  await page.getByText('FCM service account stored').waitFor();
  const apns = JSON.parse(env('HERALD_APNS_FIELDS'));
  await page.getByLabel('Key (.p8)').setInputFiles(env('HERALD_APNS_FILE'));
  await page.getByLabel('Key id', { exact: true }).fill(apns.keyId);
  await page.getByLabel('Team id').fill(apns.teamId);
  await page.getByLabel('Bundle id (topic)').fill(apns.topic);
  await page.getByLabel('Environment').selectOption(apns.environment);
  await page.locator('form', { has: page.getByLabel('Key (.p8)') }).getByRole('button', { name: 'Upload' }).click();
  await page.getByText('APNs key stored').waitFor();
  const shown = await page.locator('main').textContent();
  assert.ok(!shown.includes('PRIVATE KEY'), 'no secret is shown back');
  assert.ok(shown.includes(apns.keyId));
  await noScriptRan();
});

test('the admin rotates the key: the new one is shown once, the old one is refused', async () => {
  await page.getByRole('button', { name: 'Issue a new key' }).click();
  const issued = page.getByLabel(`New API key for ${app.id}`);
  await issued.waitFor();
  app.keys.push(await issued.inputValue());
  const oldKeyId = app.keys[0].split('_')[1];
  await page.getByRole('button', { name: `Revoke key ${oldKeyId}` }).click();
  await page.getByText(`Key ${oldKeyId} revoked.`).waitFor();
  await shot('apps');
  assert.equal((await api('GET', `/v1/apps/${app.id}/stats`, app.keys[0])).status, 401);
  assert.equal((await api('GET', `/v1/apps/${app.id}/stats`, app.keys[1])).status, 200);

  await page.getByRole('link', { name: 'Platform' }).click();
  await page.getByRole('table', { name: 'Queues' }).waitFor();
  assert.ok(await page.getByText('herald.send.high').isVisible());
  await shot('platform');

  // The audit log lists the revocation just made, by the admin, and no key.
  await page.getByRole('link', { name: 'Audit log' }).click();
  await page.getByLabel('App', { exact: true }).fill(app.id);
  await page.getByRole('button', { name: 'Filter' }).click();
  const audit = page.getByRole('table', { name: 'Admin actions, newest first' });
  await audit.getByRole('row').filter({ hasText: 'key.revoked' }).filter({ hasText: oldKeyId }).waitFor();
  const logged = await audit.textContent();
  assert.ok(logged.includes('app.created') && /admin:[0-9a-f]{8}/.test(logged), logged);
  assert.ok(!app.keys.some((key) => logged.includes(key)), 'no API key in the audit log');
  await shot('audit');
  await signOut();

  await page.getByLabel('App id').fill(app.id);
  await page.getByLabel('API key').fill(app.keys[0]);
  await page.getByRole('button', { name: 'Sign in with the API key' }).click();
  await page.getByText('Sign-in refused').waitFor();
  const storage = await page.evaluate(() => [localStorage.length, sessionStorage.length, document.cookie]);
  assert.deepEqual(storage, [0, 0, '']);
  assert.ok(!page.url().includes('hk_'), 'no key in the address');
});

test('the app owner sends a test push to a device with a hostile token and title: it reaches sent, nothing runs', async () => {
  const key = app.keys[1];
  const registered = await api('PUT', `/v1/apps/${app.id}/devices/phone-1`, key,
    { channel: 'fcm', token: HOSTILE_TOKEN, topics: ['news', '%3Cscript%3E'] });
  assert.equal(registered.status, 200, JSON.stringify(registered.json));
  await signInAsApp(app.id, key);
  const id = await sendFromConsole({ target: 'phone-1', title: HOSTILE_TITLE, body: HOSTILE_TITLE, data: `html=${HOSTILE_TOKEN}`,
    providers: { channels: ['fcm'], title: HOSTILE_TITLE, target: HOSTILE_TOKEN } });
  assert.equal(await page.locator('pre[data-part="apns-body"]').count(), 0, 'an FCM device gets no APNs preview');
  await page.getByRole('link', { name: id }).click();
  await awaitState('sent');
  await noScriptRan();

  await page.getByRole('link', { name: 'Devices' }).click();
  await page.getByLabel('Find by').selectOption('token');
  await page.getByLabel('Channel').selectOption('fcm');
  await page.getByLabel('Id or token').fill(HOSTILE_TOKEN);
  await page.getByRole('button', { name: 'Find' }).click();
  await page.getByRole('table', { name: 'Devices found' }).waitFor();
  assert.equal(await page.locator('code.token').textContent(), HOSTILE_TOKEN);
  await shot('devices');
  await noScriptRan();
});

test('a push from the console to the demo app\'s MQTT device reaches delivered on the message page', async () => {
  await signOut();
  await signInAsApp('demo', env('HERALD_DEMO_KEY'));
  const id = await sendFromConsole({ target: env('HERALD_MQTT_DEVICE'), title: 'From the console', body: 'over MQTT' });
  await shot('send');
  await page.getByRole('link', { name: id }).click();
  await awaitState('delivered');
  await page.getByText('Completed: every target has an outcome').waitFor();
  await shot('message-delivered');
});

test('a scheduled send is listed under campaigns and cancelled there', async () => {
  const later = new Date(Date.now() + 3600_000);
  const local = new Date(later.getTime() - later.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
  const id = await sendFromConsole({ kind: 'topic', target: 'news', title: 'Tomorrow\'s sale', sendAt: local });
  await page.getByRole('link', { name: 'Campaigns' }).click();
  const cancel = page.getByRole('button', { name: `Cancel message ${id}` });
  await cancel.waitFor();
  await shot('campaigns');
  await cancel.click();
  await page.getByText(`Message ${id} is cancelled.`).waitFor();
  assert.ok(dialogs.some((d) => d.type() === 'confirm'), 'the cancel asked first');
});

test('the overview and message list show the demo pushes, on a laptop and a phone, by keyboard too', async () => {
  await page.getByRole('link', { name: 'Messages' }).click();
  await page.getByRole('table', { name: 'Recent messages, newest first' }).waitFor();
  assert.ok(await page.locator('.badge.state-delivered').count() >= 1);
  await page.getByLabel('Show').selectOption('delivered');
  await page.locator('tbody .badge.state-sent').waitFor({ state: 'detached' });
  await shot('messages');

  // Keyboard: the nav is reachable with Tab and follows Enter.
  await page.locator('main').focus();
  await page.keyboard.press('Shift+Tab');
  await page.keyboard.press('Shift+Tab');
  const focused = await page.evaluate(() => document.activeElement?.textContent);
  assert.ok(focused, 'something in the header has the focus');
  await page.getByRole('link', { name: 'Overview' }).focus();
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Outcomes' }).waitFor();
  await page.waitForFunction(() => Number(document.querySelector('.summary')?.textContent?.match(/(\d+) sent/)?.[1]) > 0);
  await shot('overview');

  await page.setViewportSize({ width: 390, height: 844 });
  await page.getByRole('heading', { name: 'Outcomes' }).waitFor();
  // Chart.js resizes its canvas from a ResizeObserver, after the viewport changed: wait for it (bounded).
  await page.waitForFunction(() => document.documentElement.scrollWidth - window.innerWidth <= 1, null, { timeout: 5000 })
    .catch(() => {});
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 1, `no sideways scrolling on a phone (${overflow}px)`);
  await shot('overview-phone');
  await noScriptRan();
});

test('a session ends after 15 minutes without use', async () => {
  const idle = await browser.newPage();
  await idle.clock.install();
  await idle.goto(`${BASE}/console/`);
  await idle.getByLabel('App id').fill('demo');
  await idle.getByLabel('API key').fill(env('HERALD_DEMO_KEY'));
  await idle.getByRole('button', { name: 'Sign in with the API key' }).click();
  await idle.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
  await idle.clock.fastForward('16:00');
  await idle.getByText('Your session expired after 15 minutes without use.').waitFor();
  await idle.getByRole('heading', { name: 'Sign in' }).waitFor();
  await idle.close();
});

test('the platform page lists the live gateway and connection-manager replicas; the devices page an MQTT device\'s last connect', async () => {
  const view = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  view.on('pageerror', (error) => { throw error; });
  await view.goto(`${BASE}/console/`);
  await view.getByLabel('Admin token').fill(env('HERALD_ADMIN_TOKEN'));
  await view.getByRole('button', { name: 'Sign in as admin' }).click();
  await view.getByRole('link', { name: 'Platform' }).click();
  // One gateway and one connection manager run (locust/tests/test_console.py): one row each.
  for (const caption of ['Gateway replicas', 'Connection managers']) {
    const rows = view.getByRole('table', { name: caption }).locator('tbody tr');
    await rows.first().waitFor();
    assert.equal(await rows.count(), 1, caption);
    assert.notEqual(await rows.first().locator('td').nth(2).textContent(), '', `${caption}: the version is shown`);
  }
  await shot('platform-replicas', view);
  await view.getByRole('button', { name: 'Sign out' }).click();

  await view.getByLabel('App id').fill('demo');
  await view.getByLabel('API key').fill(env('HERALD_DEMO_KEY'));
  await view.getByRole('button', { name: 'Sign in with the API key' }).click();
  await view.getByRole('link', { name: 'Devices' }).click();
  await view.getByLabel('Find by').selectOption('id');
  await view.getByLabel('Id or token').fill(env('HERALD_MQTT_DEVICE'));
  await view.getByRole('button', { name: 'Find' }).click();
  const table = view.getByRole('table', { name: 'Devices found' });
  await table.waitFor();
  const headers = await table.locator('thead th').allTextContents();
  const cells = await table.locator('tbody tr').first().locator('td').allTextContents();
  const lastConnect = cells[headers.indexOf('Last MQTT connect')];
  assert.notEqual(lastConnect, '—', 'the device connected over MQTT during this run');
  assert.ok(['yes', 'no'].includes(cells[headers.indexOf('Connected now')]));
  await shot('devices-mqtt', view);
  await view.close();
});

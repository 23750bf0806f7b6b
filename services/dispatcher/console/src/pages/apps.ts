import { call, type AppView, type Credential, type IssuedKey } from '../api';
import { field, h, replace, select, table, time, type Child } from '../dom';
import { showError } from '../feedback';

const path = (id: string, suffix = '') => `/v1/apps/${encodeURIComponent(id)}${suffix}`;

/** A new key, shown this once: it is not kept anywhere, and leaving the page forgets it. */
function onceOnly(issued: IssuedKey, appId: string): HTMLElement {
  const key = h('input', { readonly: true, value: issued.key, 'aria-label': `New API key for ${appId}`, class: 'secret', name: 'issued-key' });
  return h('div', { class: 'once', role: 'alert' },
    h('p', {}, h('strong', {}, `New API key ${issued.keyId} for ${appId}.`), ' Copy it now: Herald stores only its hash and will not show it again.'),
    key,
    h('button', { type: 'button', onclick: () => void navigator.clipboard?.writeText(issued.key) }, 'Copy'));
}

export async function appsPage(main: HTMLElement, args: string[]) {
  const notice = h('div', { 'aria-live': 'polite' });
  const detail = h('div', {});
  const id = h('input', { name: 'id', required: true, autocomplete: 'off', spellcheck: 'false' });
  const name = h('input', { name: 'name', required: true, autocomplete: 'off' });
  const openId = h('input', { name: 'open', required: true, autocomplete: 'off', spellcheck: 'false', value: args[0] ?? '' });
  const guarded = (action: () => Promise<void>) => async (event?: Event) => {
    event?.preventDefault();
    replace(notice);
    try {
      await action();
    } catch (error) {
      showError(notice, error);
    }
  };
  const open = async (appId: string) => {
    const app = await call<AppView>('GET', path(appId));
    history.replaceState(null, '', `#/apps/${encodeURIComponent(app.id)}`);
    renderApp(app);
  };
  const renderApp = (app: AppView) => {
    const issue = guarded(async () => {
      const issued = await call<IssuedKey>('POST', path(app.id, '/keys'));
      await open(app.id);
      replace(notice, onceOnly(issued, app.id));
    });
    const revoke = (keyId: string) => guarded(async () => {
      if (!window.confirm(`Revoke key ${keyId}? Calls with it are refused at once.`)) return;
      await call('DELETE', path(app.id, `/keys/${keyId}`));
      await open(app.id);
      replace(notice, h('p', { role: 'status', class: 'ok' }, `Key ${keyId} revoked.`));
    });
    const fcmFile = h('input', { type: 'file', name: 'fcm', accept: '.json,application/json', required: true });
    const p8File = h('input', { type: 'file', name: 'p8', accept: '.p8', required: true });
    const keyId = h('input', { name: 'apnsKeyId', required: true, autocomplete: 'off' });
    const teamId = h('input', { name: 'teamId', required: true, autocomplete: 'off' });
    const topic = h('input', { name: 'topic', required: true, autocomplete: 'off', placeholder: 'com.example.app' });
    const environment = select('environment', [['production', 'production'], ['sandbox', 'sandbox']]);
    const uploadFcm = guarded(async () => {
      const text = await fcmFile.files![0].text();
      await call('PUT', path(app.id, '/credentials/fcm'), { serviceAccount: JSON.parse(text) });
      fcmFile.value = '';
      await open(app.id);
      replace(notice, h('p', { role: 'status', class: 'ok' }, 'FCM service account stored (encrypted).'));
    });
    const uploadApns = guarded(async () => {
      const p8 = await p8File.files![0].text();
      await call('PUT', path(app.id, '/credentials/apns'), {
        p8, keyId: keyId.value.trim(), teamId: teamId.value.trim(), topic: topic.value.trim(), environment: environment.value,
      });
      p8File.value = '';
      await open(app.id);
      replace(notice, h('p', { role: 'status', class: 'ok' }, 'APNs key stored (encrypted).'));
    });
    replace(detail,
      h('h2', {}, 'App ', h('code', {}, app.id)),
      h('p', {}, app.name, ' · created ', time(app.createdAt)),
      table('API keys', ['Key id', 'Issued', 'Revoke'], app.keys.map((key) => [h('code', {}, key.keyId), time(key.createdAt),
        h('button', { type: 'button', class: 'danger', 'aria-label': `Revoke key ${key.keyId}`, onclick: revoke(key.keyId) }, 'Revoke')])),
      h('button', { type: 'button', onclick: issue }, 'Issue a new key'),
      h('div', { class: 'columns' },
        h('form', { class: 'stack', 'aria-labelledby': 'fcm-title', onsubmit: uploadFcm },
          h('h3', { id: 'fcm-title' }, 'FCM'), credential(app.fcm),
          field('Service-account JSON', fcmFile), h('button', { type: 'submit' }, 'Upload')),
        h('form', { class: 'stack', 'aria-labelledby': 'apns-title', onsubmit: uploadApns },
          h('h3', { id: 'apns-title' }, 'APNs'), credential(app.apns),
          field('Key (.p8)', p8File), field('Key id', keyId), field('Team id', teamId), field('Bundle id (topic)', topic),
          field('Environment', environment), h('button', { type: 'submit' }, 'Upload'))));
  };
  const create = guarded(async () => {
    const created = await call<{ id: string; apiKey: IssuedKey }>('POST', '/v1/apps', { id: id.value.trim(), name: name.value.trim() });
    id.value = '';
    name.value = '';
    await open(created.id);
    replace(notice, onceOnly(created.apiKey, created.id));
  });
  replace(main, h('h1', {}, 'Apps'),
    h('div', { class: 'columns' },
      h('form', { class: 'stack', 'aria-labelledby': 'create-title', onsubmit: create },
        h('h2', { id: 'create-title' }, 'Create an app'), field('App id', id, 'Letters, digits, . _ -'), field('Name', name),
        h('button', { type: 'submit' }, 'Create')),
      h('form', { class: 'stack', 'aria-labelledby': 'open-title', onsubmit: guarded(() => open(openId.value.trim())) },
        h('h2', { id: 'open-title' }, 'Open an app'), field('App id', openId), h('button', { type: 'submit' }, 'Open'))),
    notice, detail);
  if (args[0]) await open(args[0]);
}

/** What the admin API shows of a credential: its public parts, fingerprint and when it was set; never the secret. */
function credential(view: Credential | undefined): Child {
  if (!view) return h('p', { class: 'muted' }, 'Not set.');
  const { fingerprint, setAt, ...rest } = view;
  return h('dl', { class: 'facts' },
    Object.entries(rest).map(([name, value]) => h('div', {}, h('dt', {}, name), h('dd', {}, value ?? '—'))),
    fingerprint ? h('div', {}, h('dt', {}, 'fingerprint'), h('dd', {}, h('code', {}, fingerprint))) : null,
    setAt ? h('div', {}, h('dt', {}, 'set'), h('dd', {}, time(setAt))) : null);
}

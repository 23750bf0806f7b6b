import { call } from '../api';
import { field, h, replace, table, time } from '../dom';
import { showError } from '../feedback';

/** An entry of GET /v1/audit (fields an action has no value for are absent). */
interface AuditEntry {
  id: string; at: string; actor: string; action: string; app?: string; target?: string; detail?: string;
  address?: string; forwardedFor?: string;
}
interface AuditPage { entries: AuditEntry[]; next?: string }

const ACTIONS = ['app.created', 'key.created', 'key.revoked', 'credential.set', 'credential.generated', 'credential.deleted',
  'limits.set', 'time-zone.set', 'time-zone.deleted', 'device.mqtt-credentials.revoked', 'credentials.re-encrypted'];

/** The admin audit log, newest first, filtered by app and action, a page at a time. */
export async function auditPage(main: HTMLElement) {
  const app = h('input', { name: 'app', autocomplete: 'off', spellcheck: 'false', placeholder: 'any app' });
  const action = h('select', { name: 'action' }, h('option', { value: '' }, 'Any action'),
    ACTIONS.map((name) => h('option', { value: name }, name)));
  const list = h('div', {});
  const more = h('button', { type: 'button', class: 'secondary' }, 'Older entries');
  let cursor: string | undefined;
  const shown: AuditEntry[] = [];
  const load = async (reset: boolean) => {
    if (reset) { shown.length = 0; cursor = undefined; }
    const query = new URLSearchParams({ limit: '50' });
    if (cursor) query.set('before', cursor);
    if (app.value.trim()) query.set('app', app.value.trim());
    if (action.value) query.set('action', action.value);
    const page = await call<AuditPage>('GET', `/v1/audit?${query}`);
    shown.push(...page.entries);
    cursor = page.next;
    more.hidden = !cursor;
    replace(list, table('Admin actions, newest first', ['Time', 'Action', 'App', 'Target', 'Detail', 'Actor', 'From'],
      shown.map((entry) => [time(entry.at), h('code', {}, entry.action), entry.app ?? '—', entry.target ?? '—',
        entry.detail ?? '—', entry.actor, [entry.address ?? '', entry.forwardedFor ? ` (forwarded for ${entry.forwardedFor})` : '']])));
  };
  const show = (reset: boolean) => void load(reset).catch((error) => showError(list, error));
  action.addEventListener('change', () => show(true));
  more.addEventListener('click', () => show(false));
  replace(main, h('h1', {}, 'Audit log'),
    h('p', {}, 'Every admin action that took effect, with who made it (a fingerprint of the admin token used) and from where. Secrets are never recorded.'),
    h('form', { class: 'inline', onsubmit: (e) => { e.preventDefault(); show(true); } },
      field('App', app), field('Action', action), h('button', { type: 'submit' }, 'Filter')),
    list, more);
  await load(true);
}

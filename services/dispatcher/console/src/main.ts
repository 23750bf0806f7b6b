import './styles.css';
import { ApiError, begin, call, current, end, onEnd, touch, type Session } from './api';
import { field, h, replace } from './dom';
import { showError } from './feedback';
import { overviewPage } from './pages/overview';
import { messagesPage, messagePage } from './pages/messages';
import { devicesPage } from './pages/devices';
import { sendPage } from './pages/send';
import { campaignsPage } from './pages/campaigns';
import { appsPage } from './pages/apps';
import { platformPage } from './pages/platform';
import { auditPage } from './pages/audit';


/** A page renders into main and may return a function that stops its timers when the page is left. */
type Page = (main: HTMLElement, args: string[]) => Promise<(() => void) | void>;

const APP_PAGES: [string, string, Page][] = [
  ['overview', 'Overview', overviewPage],
  ['messages', 'Messages', messagesPage],
  ['devices', 'Devices', devicesPage],
  ['send', 'Send a test push', sendPage],
  ['campaigns', 'Campaigns', campaignsPage],
];
const ADMIN_PAGES: [string, string, Page][] = [
  ['apps', 'Apps', appsPage],
  ['platform', 'Platform', platformPage],
  ['audit', 'Audit log', auditPage],
];

const root = document.getElementById('app')!;
let leave: (() => void) | void;
let notice = '';

function pages(session: Session) {
  return session.kind === 'app' ? APP_PAGES : ADMIN_PAGES;
}

async function route(): Promise<void> {
  if (leave) leave();
  leave = undefined;
  const session = current();
  if (!session) {
    signIn();
    return;
  }
  const hash = location.hash.startsWith('#/') ? location.hash.slice(2) : '';
  const [name, ...args] = hash.split('/').map(decodeURIComponent);
  const available = pages(session);
  const found = available.find(([id]) => id === name) ?? (name === 'message' && session.kind === 'app' ? ['messages', '', messagePage] as const : undefined);
  if (!found) {
    location.replace(`#/${available[0][0]}`);
    return;
  }
  const main = h('main', { id: 'main', tabindex: -1 });
  replace(root, header(session, found[0]), main);
  try {
    leave = await found[2](main, args);
  } catch (error) {
    showError(main, error);
  }
  main.focus({ preventScroll: true });
}

function header(session: Session, active: string): HTMLElement {
  const who = session.kind === 'app' ? `App ${session.appId}` : 'Platform admin';
  return h('header', { class: 'top' },
    h('p', { class: 'brand' }, 'Herald console'),
    h('nav', { 'aria-label': 'Console pages' },
      h('ul', {}, pages(session).map(([id, label]) =>
        h('li', {}, h('a', { href: `#/${id}`, 'aria-current': id === active ? 'page' : undefined }, label))))),
    h('p', { class: 'who' }, who, ' ',
      h('button', { type: 'button', class: 'secondary', onclick: () => end('You signed out.') }, 'Sign out')));
}

function signIn(): void {
  const appId = h('input', { name: 'app', autocomplete: 'off', required: true, spellcheck: 'false' });
  const key = h('input', { name: 'key', type: 'password', autocomplete: 'off', required: true });
  const token = h('input', { name: 'token', type: 'password', autocomplete: 'off', required: true });
  const attempt = async (event: Event, next: Session, check: string) => {
    event.preventDefault();
    begin(next);
    try {
      await call('GET', check);
      notice = '';
      location.hash = next.kind === 'app' ? '#/overview' : '#/apps';
      await route();
    } catch (error) {
      end(`Sign-in refused: ${error instanceof ApiError ? error.message : String(error)}`);
    }
  };
  const appForm = h('form', {
    'aria-labelledby': 'app-sign-in',
    onsubmit: (event) => attempt(event, { kind: 'app', appId: appId.value.trim(), key: key.value.trim() },
      `/v1/apps/${encodeURIComponent(appId.value.trim())}/stats`),
  }, h('h2', { id: 'app-sign-in' }, 'App owner'), field('App id', appId), field('API key', key),
  h('button', { type: 'submit' }, 'Sign in with the API key'));
  const adminForm = h('form', {
    'aria-labelledby': 'admin-sign-in',
    onsubmit: (event) => attempt(event, { kind: 'admin', token: token.value.trim() }, '/v1/platform'),
  }, h('h2', { id: 'admin-sign-in' }, 'Platform admin'), field('Admin token', token),
  h('button', { type: 'submit' }, 'Sign in as admin'));
  replace(root,
    h('header', { class: 'top' }, h('p', { class: 'brand' }, 'Herald console')),
    h('main', { id: 'main', class: 'sign-in', tabindex: -1 },
      h('h1', {}, 'Sign in'),
      notice ? h('p', { class: 'notice', role: 'status' }, notice) : null,
      h('p', {}, 'The key stays in this tab\'s memory only: reloading or closing the tab, signing out, or 15 minutes without use ends the session.'),
      h('div', { class: 'cards' }, appForm, adminForm)));
}

onEnd((reason) => {
  notice = reason;
  if (leave) leave();
  leave = undefined;
  signIn();
});
for (const event of ['keydown', 'pointerdown']) document.addEventListener(event, () => { if (current()) touch(); });
// The idle limit is checked even when nothing is clicked, so an unattended tab locks itself.
setInterval(() => { current(); }, 30_000);
window.addEventListener('hashchange', () => {
  if (location.hash.startsWith('#/') || location.hash === '') void route();
  else document.getElementById('main')?.focus();
});
void route();

import { appPath, call, type Message, type MessagePage } from '../api';
import { badge, field, h, replace, select, table, time, type Child } from '../dom';

const STATES: [string, string][] = [['', 'Any state'], ...['scheduled', 'accepted', 'queued', 'sending', 'sent', 'delivered',
  'failed', 'expired', 'cancelling', 'cancelled'].map((state): [string, string] => [state, state])];

export function messageRows(messages: Message[], extra?: (message: Message) => Child): Child[][] {
  return messages.map((message) => [
    h('a', { href: `#/message/${message.id}` }, message.id),
    badge(message.state),
    `${message.targets.sent + message.targets.delivered} / ${message.targets.total}`,
    String(message.targets.failed),
    String(message.targets.pending),
    time(message.acceptedAt),
    ...(extra ? [extra(message)] : []),
  ]);
}

export const MESSAGE_COLUMNS = ['Message', 'State', 'Sent or delivered / targets', 'Failed', 'Pending', 'Accepted'];

export async function messagesPage(main: HTMLElement, args: string[]) {
  const state = select('state', STATES, args[0] ?? '');
  const list = h('div', {});
  const more = h('button', { type: 'button', class: 'secondary' }, 'Older messages');
  let cursor: string | undefined;
  const shown: Message[] = [];
  const load = async (reset: boolean) => {
    if (reset) { shown.length = 0; cursor = undefined; }
    const query = new URLSearchParams({ limit: '20' });
    if (cursor) query.set('before', cursor);
    if (state.value) query.set('state', state.value);
    const page = await call<MessagePage>('GET', appPath(`/messages?${query}`));
    shown.push(...page.messages);
    cursor = page.next;
    more.hidden = !cursor;
    replace(list, table('Recent messages, newest first', MESSAGE_COLUMNS, messageRows(shown)));
  };
  state.addEventListener('change', () => { history.replaceState(null, '', `#/messages/${state.value}`); void load(true); });
  more.addEventListener('click', () => void load(false));
  replace(main, h('h1', {}, 'Messages'), h('form', { class: 'inline', onsubmit: (e) => e.preventDefault() }, field('Show', state)), list, more);
  await load(true);
}

export async function messagePage(main: HTMLElement, args: string[]) {
  const id = args[0] ?? '';
  const body = h('div', {});
  replace(main, h('p', {}, h('a', { href: '#/messages' }, '← Messages')), h('h1', {}, 'Message ', h('code', {}, id)), body);
  let timer: number | undefined;
  const refresh = async () => {
    const message = await call<Message>('GET', appPath(`/messages/${encodeURIComponent(id)}`));
    render(body, message);
    if (!message.completedAt) timer = window.setTimeout(() => void refresh().catch(() => undefined), 1000);
  };
  await refresh();
  return () => window.clearTimeout(timer);
}

function render(body: HTMLElement, message: Message): void {
  const t = message.targets;
  const events: [string, string][] = [];
  if (message.acceptedAt) events.push([message.acceptedAt, 'Accepted by Herald']);
  for (const due of message.dueAt ?? []) events.push([due, 'Due (scheduled send)']);
  if (message.queuedAt) events.push([message.queuedAt, 'Queued (RabbitMQ confirmed)']);
  if (message.cancelledAt) events.push([message.cancelledAt, 'Cancelled']);
  if (message.completedAt) events.push([message.completedAt, 'Completed: every target has an outcome']);
  events.sort(([a], [b]) => a.localeCompare(b));
  replace(body,
    h('p', {}, 'State: ', badge(message.state), message.completedAt ? '' : ' (refreshing)'),
    h('dl', { class: 'totals' }, ([['Targets', t.total], ['Sent', t.sent], ['Delivered', t.delivered], ['Failed', t.failed],
      ['Expired', t.expired], ['Pending', t.pending], ['Cancelled', t.cancelled], ['Tokens removed', message.tokensRemoved]] as [string, number][])
      .map(([name, value]) => h('div', {}, h('dt', {}, name), h('dd', {}, String(value))))),
    h('h2', {}, 'Timeline'),
    h('ol', { class: 'timeline' }, events.map(([at, what]) => h('li', {}, time(at), ' ', what))),
    h('h2', {}, 'Failure reasons'),
    table('Failures by reason', ['Reason', 'Targets'], Object.entries(message.failures).map(([reason, count]) => [reason, String(count)])));
}

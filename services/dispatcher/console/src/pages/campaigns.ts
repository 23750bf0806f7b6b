import { appPath, call, type Message, type MessagePage } from '../api';
import { h, replace, table, time } from '../dom';
import { showError } from '../feedback';
import { MESSAGE_COLUMNS, messageRows } from './messages';

const RUNNING = ['scheduled', 'queued', 'sending', 'cancelling'];

export async function campaignsPage(main: HTMLElement) {
  const lists = h('div', {});
  const status = h('div', { 'aria-live': 'polite' });
  const load = async () => {
    const pages = await Promise.all(RUNNING.map((state) =>
      call<MessagePage>('GET', appPath(`/messages?limit=50&state=${state}`))));
    const messages = pages.flatMap((page) => page.messages);
    const cancel = (message: Message) => message.state === 'cancelling' ? '—'
      : h('button', { type: 'button', class: 'danger', 'aria-label': `Cancel message ${message.id}`, onclick: () => void confirmCancel(message) }, 'Cancel');
    replace(lists,
      table('Scheduled and running sends', [...MESSAGE_COLUMNS, 'Next due', 'Cancel'], messages.map((message, i) => {
        const row = messageRows([message])[0];
        row.push(time(message.dueAt?.[0]), cancel(messages[i]));
        return row;
      })));
  };
  const confirmCancel = async (message: Message) => {
    if (!window.confirm(`Cancel message ${message.id}? Targets not sent yet will not be sent.`)) return;
    try {
      const after = await call<Message>('DELETE', appPath(`/messages/${encodeURIComponent(message.id)}`));
      replace(status, h('p', { role: 'status', class: 'ok' }, `Message ${after.id} is ${after.state}.`));
      await load();
    } catch (error) {
      replace(status);
      showError(status, error);
    }
  };
  replace(main, h('h1', {}, 'Campaigns'),
    h('p', {}, 'Sends scheduled for later (sendAt) and sends still going out. Cancelling stops every target not sent yet.'),
    status, lists);
  await load();
  const timer = window.setInterval(() => void load().catch(() => undefined), 5000);
  return () => window.clearInterval(timer);
}

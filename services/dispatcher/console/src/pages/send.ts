import { appPath, call, type Message, type MessagePreview } from '../api';
import { field, h, replace, select } from '../dom';
import { showError } from '../feedback';

export async function sendPage(main: HTMLElement) {
  const kind = select('kind', [['devices', 'Device'], ['topic', 'Topic']]);
  const target = h('input', { name: 'target', required: true, autocomplete: 'off', spellcheck: 'false' });
  const title = h('input', { name: 'title', autocomplete: 'off' });
  const text = h('textarea', { name: 'body' });
  const data = h('textarea', { name: 'data', placeholder: 'key=value, one per line' });
  const priority = select('priority', [['normal', 'normal'], ['high', 'high']]);
  const sendAt = h('input', { name: 'sendAt', type: 'datetime-local' });
  const preview = h('pre', { class: 'preview', 'aria-live': 'polite', tabindex: 0 });
  const result = h('div', {});
  const providers = h('div', { class: 'stack', 'aria-live': 'polite' });
  const showProviders = async () => {
    replace(providers, h('p', { role: 'status' }, 'Building the preview…'));
    try {
      const built = await call<MessagePreview>('POST', appPath('/previews'), request());
      const channels = Object.entries(built.channels);
      replace(providers, channels.length === 0
        ? h('p', {}, 'None of these devices is registered: nothing would be sent.')
        : channels.map(([channel, one]) => h('section', { class: 'provider', 'aria-label': `${channel} preview` },
          h('h3', {}, PROVIDER_NAMES[channel] ?? channel),
          h('p', {}, 'To ', h('code', {}, one.target)),
          one.headers ? h('pre', { class: 'payload', 'data-part': `${channel}-headers`, tabindex: 0 },
            Object.entries(one.headers).map(([name, value]) => `${name}: ${value}`).join('\n')) : null,
          h('pre', { class: 'payload', 'data-part': `${channel}-body`, tabindex: 0 }, JSON.stringify(one.body, null, 2)))));
    } catch (error) {
      replace(providers);
      showError(providers, error);
    }
  };
  const request = () => {
    const body: Record<string, unknown> = {
      to: kind.value === 'devices' ? { devices: [target.value.trim()] } : { topic: target.value.trim() },
      priority: priority.value,
    };
    if (title.value) body.title = title.value;
    if (text.value) body.body = text.value;
    const pairs = data.value.split('\n').map((line) => line.trim()).filter(Boolean).map((line) => {
      const at = line.indexOf('=');
      return at < 0 ? [line, ''] : [line.slice(0, at).trim(), line.slice(at + 1).trim()];
    });
    if (pairs.length) body.data = Object.fromEntries(pairs);
    if (sendAt.value) body.sendAt = new Date(sendAt.value).toISOString();
    return body;
  };
  const update = () => { preview.textContent = JSON.stringify(request(), null, 2); };
  const form = h('form', {
    class: 'stack',
    oninput: update,
    onsubmit: async (event) => {
      event.preventDefault();
      replace(result, h('p', { role: 'status' }, 'Sending…'));
      try {
        const sent = await call<Message>('POST', appPath('/messages'), request());
        replace(result, h('p', { role: 'status', class: 'ok' }, 'Accepted as ',
          h('a', { href: `#/message/${sent.id}` }, sent.id), ` (${sent.state}).`));
      } catch (error) {
        replace(result);
        showError(result, error);
      }
    },
  }, field('Send to', kind), field('Device id or topic', target), field('Title', title), field('Body', text),
  field('Data', data, 'Sent to the app as key/value pairs.'), field('Priority', priority),
  field('Send at (optional)', sendAt, 'Your browser\'s local time; empty sends now.'),
  h('div', { class: 'actions' },
    h('button', { type: 'button', class: 'secondary', onclick: showProviders }, 'Preview what providers receive'),
    h('button', { type: 'submit' }, 'Send')));
  update();
  replace(main, h('h1', {}, 'Send a test push'),
    h('div', { class: 'columns' }, h('section', { 'aria-labelledby': 'compose' }, h('h2', { id: 'compose' }, 'Compose'), form, result),
      h('section', { 'aria-labelledby': 'preview-title' }, h('h2', { id: 'preview-title' }, 'Preview: the request Herald receives'),
        preview,
        h('h2', {}, 'What FCM, APNs and MQTT receive'),
        h('p', {}, 'Built by the same code the gateway sends with, for each channel the audience reaches; nothing is sent.'),
        providers)));
}

const PROVIDER_NAMES: Record<string, string> = { fcm: 'FCM (HTTP v1 request body)', apns: 'APNs (headers and payload)', mqtt: 'MQTT (what the device receives)' };

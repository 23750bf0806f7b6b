import { ApiError, appPath, call, type Device } from '../api';
import { field, h, replace, select, table, time } from '../dom';
import { showError } from '../feedback';

export async function devicesPage(main: HTMLElement) {
  const by = select('by', [['id', 'Device id'], ['token', 'Provider token']]);
  const channel = select('channel', [['fcm', 'FCM'], ['apns', 'APNs'], ['mqtt', 'MQTT']]);
  const value = h('input', { name: 'value', required: true, autocomplete: 'off', spellcheck: 'false' });
  const channelField = field('Channel', channel);
  const result = h('div', { 'aria-live': 'polite' });
  const sync = () => { channelField.hidden = by.value !== 'token'; };
  by.addEventListener('change', sync);
  sync();
  const search = async (event: Event) => {
    event.preventDefault();
    replace(result, h('p', { role: 'status' }, 'Looking…'));
    try {
      let found: Device[];
      if (by.value === 'id') {
        found = [await call<Device>('GET', appPath(`/devices/${encodeURIComponent(value.value.trim())}`))];
      } else {
        const query = new URLSearchParams({ channel: channel.value, token: value.value.trim() });
        found = (await call<{ devices: Device[] }>('GET', appPath(`/devices?${query}`))).devices;
      }
      replace(result, table('Devices found', ['Device', 'Channel', 'Token', 'Topics', 'Last registered', 'Last MQTT connect', 'Connected now', 'Stale', 'Time zone'],
        found.map((device) => [h('code', {}, device.deviceId), device.channel, device.token ? h('code', { class: 'token' }, device.token) : '—',
          device.topics.length ? h('ul', { class: 'plain' }, device.topics.map((topic) => h('li', {}, topic))) : '—',
          time(device.updatedAt), device.mqtt ? time(device.mqtt.lastConnectAt) : '—',
          device.mqtt ? (device.mqtt.connected ? 'yes' : 'no') : '—', device.stale ? 'yes' : 'no', device.timeZone ?? '—'])));
    } catch (error) {
      replace(result);
      if (error instanceof ApiError && error.status === 404) replace(result, h('p', { role: 'status' }, 'No such device in this app.'));
      else showError(result, error);
    }
  };
  replace(main, h('h1', {}, 'Devices'),
    h('form', { class: 'inline', onsubmit: (event) => void search(event) }, field('Find by', by), channelField, field('Id or token', value),
      h('button', { type: 'submit' }, 'Find')),
    result);
}

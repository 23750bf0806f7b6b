import { call, type Platform } from '../api';
import { h, replace, table } from '../dom';

export async function platformPage(main: HTMLElement) {
  const body = h('div', {});
  replace(main, h('h1', {}, 'Platform'),
    h('p', {}, 'Queue depths and consumers as RabbitMQ counts them; MQTT nodes and their open connections from the connection managers\' leases. Refreshes every 5 seconds.'),
    body);
  const load = async () => {
    const platform = await call<Platform>('GET', '/v1/platform');
    replace(body,
      h('dl', { class: 'totals' },
        h('div', {}, h('dt', {}, 'Gateway consumers'), h('dd', {}, String(platform.gatewayConsumers))),
        h('div', {}, h('dt', {}, 'MQTT nodes'), h('dd', {}, String(platform.mqttNodes.length))),
        h('div', {}, h('dt', {}, 'Connected MQTT devices'), h('dd', {}, String(platform.mqttConnections)))),
      table('Queues', ['Queue', 'Ready messages', 'Consumers'], platform.queues.map((queue) => [
        h('code', {}, queue.name), queue.messages < 0 ? 'not declared' : String(queue.messages), queue.consumers < 0 ? '—' : String(queue.consumers)])),
      table('Connection managers', ['Node', 'Open connections'], platform.mqttNodes.map((node) => [h('code', {}, node.node), String(node.connections)])));
  };
  await load();
  const timer = window.setInterval(() => void load().catch(() => undefined), 5000);
  return () => window.clearInterval(timer);
}

import { call, type Platform, type Replica } from '../api';
import { h, replace, table, time } from '../dom';

export async function platformPage(main: HTMLElement) {
  const body = h('div', {});
  replace(main, h('h1', {}, 'Platform'),
    h('p', {}, 'Queue depths and consumers as RabbitMQ counts them; the live gateway replicas and connection managers from their leases in Redis, as each described itself at its last renewal. Refreshes every 5 seconds.'),
    body);
  const load = async () => {
    const platform = await call<Platform>('GET', '/v1/platform');
    replace(body,
      h('dl', { class: 'totals' },
        h('div', {}, h('dt', {}, 'Gateway replicas'), h('dd', {}, String(platform.gateways.length))),
        h('div', {}, h('dt', {}, 'Connection managers'), h('dd', {}, String(platform.connectionManagers.length))),
        h('div', {}, h('dt', {}, 'Connected MQTT devices'), h('dd', {}, String(platform.mqttConnections)))),
      table('Queues', ['Queue', 'Ready messages', 'Consumers'], platform.queues.map((queue) => [
        h('code', {}, queue.name), queue.messages < 0 ? 'not declared' : String(queue.messages), queue.consumers < 0 ? '—' : String(queue.consumers)])),
      table('Gateway replicas', ['Replica', 'Started', 'Version', 'Requests in flight', 'Deliveries/s'],
        platform.gateways.map((replica) => [...identity(replica), figure(replica, 'inFlight'), figure(replica, 'deliveriesPerSecond')])),
      table('Connection managers', ['Node', 'Started', 'Version', 'Open connections'],
        platform.connectionManagers.map((node) => [...identity(node), figure(node, 'connections')])));
  };
  await load();
  const timer = window.setInterval(() => void load().catch(() => undefined), 5000);
  return () => window.clearInterval(timer);
}

function identity(replica: Replica) {
  return [h('code', {}, replica.id), time(replica.startedAt), replica.version];
}

function figure(replica: Replica, name: string): string {
  return String(replica.figures[name] ?? 0);
}

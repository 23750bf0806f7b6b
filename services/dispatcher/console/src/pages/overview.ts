import {
  BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, LineController, LineElement, PointElement, Tooltip,
} from 'chart.js';
import { appPath, call, type History, type Stats } from '../api';
import { h, replace } from '../dom';
import { showError } from '../feedback';

Chart.register(LineController, LineElement, PointElement, BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);

const WINDOWS: [string, string][] = [['hour', 'Last hour'], ['day', 'Last day'], ['week', 'Last week']];
// Colours chosen to keep 3:1 contrast against the white chart background (WCAG 1.4.11).
const COLOURS = { sent: '#1f5fbf', delivered: '#1b7a3a', failed: '#b3261e', tokensRemoved: '#8a4b00' };
const REASON_COLOURS = ['#b3261e', '#6a3d9a', '#8a4b00', '#00606b', '#5c5c5c', '#9c2f6b'];

export async function overviewPage(main: HTMLElement, args: string[]) {
  const window = WINDOWS.some(([id]) => id === args[0]) ? args[0] : 'day';
  const [stats, history] = await Promise.all([
    call<Stats>('GET', appPath('/stats')),
    call<History>('GET', appPath(`/stats/history?window=${window}`)),
  ]);
  const failedTotal = Object.values(stats.failed).reduce((sum, n) => sum + n, 0);
  const totals = h('dl', { class: 'totals' },
    total('Sent (all time)', stats.sent), total('Failed (all time)', failedTotal), total('Expired', stats.expired),
    total('Tokens removed', stats.tokensRemoved + stats.staleTokensRemoved), total('Cancelled', stats.cancelled));
  const picker = h('div', { class: 'segmented', role: 'group', 'aria-label': 'Time window' },
    WINDOWS.map(([id, label]) => h('a', { href: `#/overview/${id}`, 'aria-current': id === window ? 'true' : undefined }, label)));
  const outcomes = h('canvas', { role: 'img', 'aria-label': `Sent, delivered, failed and tokens removed per ${history.bucket}` });
  const reasons = h('canvas', { role: 'img', 'aria-label': `Failures by reason per ${history.bucket}` });
  const labels = history.buckets.map((bucket) => label(bucket.start, history.bucket));
  const sum = (pick: (b: History['buckets'][number]) => number) => history.buckets.reduce((n, b) => n + pick(b), 0);
  const summary = h('p', { class: 'summary' },
    `In this window: ${sum((b) => b.sent)} sent, ${sum((b) => b.delivered)} delivered, ${sum((b) => b.failed)} failed, `
    + `${sum((b) => b.tokensRemoved)} tokens removed.`);
  replace(main, h('h1', {}, 'Overview'), totals, picker, summary,
    h('section', { class: 'chart', 'aria-labelledby': 'outcomes-title' }, h('h2', { id: 'outcomes-title' }, 'Outcomes'), h('div', { class: 'canvas' }, outcomes)),
    h('section', { class: 'chart', 'aria-labelledby': 'reasons-title' }, h('h2', { id: 'reasons-title' }, 'Failures by reason'), h('div', { class: 'canvas' }, reasons)));
  const charts: Chart[] = [];
  try {
    charts.push(new Chart(outcomes, {
      type: 'line',
      data: {
        labels,
        datasets: (['sent', 'delivered', 'failed', 'tokensRemoved'] as const).map((name) => ({
          label: name === 'tokensRemoved' ? 'tokens removed' : name,
          data: history.buckets.map((bucket) => bucket[name]),
          borderColor: COLOURS[name], backgroundColor: COLOURS[name], pointRadius: 0, tension: 0.2,
        })),
      },
      options: { animation: false, maintainAspectRatio: false, scales: { y: { beginAtZero: true, ticks: { precision: 0 } } } },
    }));
    const reasonNames = [...new Set(history.buckets.flatMap((bucket) => Object.keys(bucket.failures)))].sort();
    if (reasonNames.length === 0) {
      reasons.parentElement!.replaceWith(h('p', { class: 'muted' }, 'No failures in this window.'));
      return () => charts.forEach((chart) => chart.destroy());
    }
    charts.push(new Chart(reasons, {
      type: 'bar',
      data: {
        labels,
        datasets: reasonNames.map((reason, i) => ({
          label: reason, data: history.buckets.map((bucket) => bucket.failures[reason] ?? 0),
          backgroundColor: REASON_COLOURS[i % REASON_COLOURS.length],
        })),
      },
      options: {
        animation: false, maintainAspectRatio: false,
        scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } } },
      },
    }));
  } catch (error) {
    showError(main, error);
  }
  return () => charts.forEach((chart) => chart.destroy());
}

function total(name: string, value: number) {
  return h('div', {}, h('dt', {}, name), h('dd', {}, value.toLocaleString()));
}

function label(start: string, bucket: string): string {
  const date = new Date(start);
  return bucket === 'minute'
    ? date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })
    : date.toLocaleString([], { weekday: 'short', hour: '2-digit' });
}

import { ApiError, end } from './api';
import { h } from './dom';

/** Shows what went wrong where it happened; a refused key ends the session. */
export function showError(where: HTMLElement, error: unknown): void {
  const text = error instanceof ApiError ? error.message : String(error);
  where.appendChild(h('p', { class: 'error', role: 'alert' }, text));
  if (error instanceof ApiError && error.status === 401) end('Herald no longer accepts this key: sign in again.');
}

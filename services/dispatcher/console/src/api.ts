// The session and every call to Herald's API. The key lives in this module's memory only: never in
// localStorage, sessionStorage, a cookie or a URL. A reload or closed tab ends the session; so do
// fifteen minutes without use. With no cookie the browser sends no credential by itself, so a page
// on another origin cannot make calls in the user's name (no CSRF), and the API answers no CORS.

export type Session =
  | { kind: 'app'; appId: string; key: string }
  | { kind: 'admin'; token: string };

export const IDLE_LIMIT_MS = 15 * 60 * 1000;

let session: Session | null = null;
let lastUse = 0;
const listeners: ((reason: string) => void)[] = [];

export function current(): Session | null {
  if (session && Date.now() - lastUse > IDLE_LIMIT_MS) end('Your session expired after 15 minutes without use.');
  return session;
}

export function begin(next: Session): void {
  session = next;
  touch();
}

export function touch(): void {
  lastUse = Date.now();
}

export function end(reason: string): void {
  session = null;
  for (const listener of listeners) listener(reason);
}

export function onEnd(listener: (reason: string) => void): void {
  listeners.push(listener);
}

/** A Problem Details answer (RFC 9457), or a transport failure, as one error. */
export class ApiError extends Error {
  constructor(readonly status: number, readonly title: string, readonly detail: string) {
    super(detail ? `${title}: ${detail}` : title);
  }
}

export async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const active = current();
  if (!active) throw new ApiError(401, 'Signed out', 'sign in again');
  touch();
  const headers: Record<string, string> = {
    Authorization: `Bearer ${active.kind === 'app' ? active.key : active.token}`,
    Accept: 'application/json, application/problem+json',
  };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'omit', cache: 'no-store', redirect: 'error', referrerPolicy: 'no-referrer',
    });
  } catch (error) {
    throw new ApiError(0, 'Herald did not answer', String(error));
  }
  const text = await response.text();
  const json = text ? safeJson(text) : undefined;
  if (!response.ok) {
    const problem = (json ?? {}) as { title?: string; detail?: string };
    throw new ApiError(response.status, problem.title ?? `HTTP ${response.status}`, problem.detail ?? '');
  }
  return json as T;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { title: 'Not JSON', detail: text.slice(0, 200) };
  }
}

export function appPath(suffix = ''): string {
  const active = current();
  if (!active || active.kind !== 'app') throw new ApiError(401, 'Signed out', 'sign in with an API key');
  return `/v1/apps/${encodeURIComponent(active.appId)}${suffix}`;
}

// The API's answers, as the OpenAPI document describes them.
export interface Targets { total: number; sent: number; delivered: number; failed: number; expired: number; pending: number; expanded: boolean; cancelled: number }
export interface Message {
  id: string; state: string; targets: Targets; failures: Record<string, number>; tokensRemoved: number;
  acceptedAt?: string; queuedAt?: string; completedAt?: string; cancelledAt?: string; dueAt?: string[];
}
export interface ChannelPreview { target: string; headers?: Record<string, string>; body?: unknown }
export interface MessagePreview { messageId: string; channels: Record<string, ChannelPreview> }
export interface MessagePage { messages: Message[]; next?: string }
export interface Stats { sent: number; failed: Record<string, number>; expired: number; tokensRemoved: number; cancelled: number; staleTokensSkipped: number; staleTokensRemoved: number }
export interface Bucket { start: string; sent: number; delivered: number; failed: number; expired: number; tokensRemoved: number; failures: Record<string, number> }
export interface History { window: string; bucket: string; buckets: Bucket[] }
export interface MqttAccess { clientId: string; username: string; topic: string; lastConnectAt?: string; connected: boolean }
export interface Device { deviceId: string; channel: string; token?: string; topics: string[]; updatedAt: string; stale: boolean; timeZone?: string; mqtt?: MqttAccess }
export interface KeyView { keyId: string; createdAt: string }
export interface Credential { fingerprint?: string; setAt?: string; [field: string]: string | undefined }
export interface AppView { id: string; name: string; createdAt: string; keys: KeyView[]; fcm?: Credential; apns?: Credential }
export interface IssuedKey { keyId: string; key: string }
export interface Replica { id: string; startedAt: string; version: string; figures: Record<string, number> }
export interface Platform {
  queues: { name: string; messages: number; consumers: number }[];
  gateways: Replica[]; connectionManagers: Replica[]; mqttConnections: number;
}

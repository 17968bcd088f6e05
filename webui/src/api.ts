// The master's REST API (the same api the det CLI calls), with the session token this browser
// keeps in localStorage. Every call is same-origin: the master serves this UI.

import { timeNs } from "./determined";

const TOKEN_KEY = "det.token";
const USER_KEY = "det.user";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function session(): { token: string; user: string } | null {
  const token = localStorage.getItem(TOKEN_KEY);
  return token ? { token, user: localStorage.getItem(USER_KEY) ?? "" } : null;
}

// Called when the master says the session is over (401): the app shows the login page.
let onSignedOut: () => void = () => {};
export function whenSignedOut(callback: () => void) {
  onSignedOut = callback;
}

function forget() {
  localStorage.removeItem(TOKEN_KEY);
  localStorage.removeItem(USER_KEY);
  onSignedOut();
}

async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  const token = localStorage.getItem(TOKEN_KEY);
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (!response.ok) {
    const message =
      (parsed as { message?: string } | null)?.message ?? `${response.status} ${response.statusText}`;
    // Only when the token that was refused is still the one kept: a late answer to a request of
    // an earlier session must not end the new one.
    if (response.status === 401 && token && localStorage.getItem(TOKEN_KEY) === token) forget();
    throw new ApiError(response.status, message);
  }
  return parsed as T;
}

export const get = <T>(path: string) => request<T>("GET", path);
export const post = <T>(path: string, body?: unknown) => request<T>("POST", path, body ?? {});
export const del = <T>(path: string) => request<T>("DELETE", path);

export async function login(username: string, password: string): Promise<void> {
  const reply = await request<{ token: string }>("POST", "/api/v1/auth/login", {
    username,
    password,
  });
  localStorage.setItem(TOKEN_KEY, reply.token);
  localStorage.setItem(USER_KEY, username);
}

export async function logout(): Promise<void> {
  try {
    await request("POST", "/api/v1/auth/logout", {});
  } finally {
    forget();
  }
}

// One line of Determined's TaskLogs stream.
interface ApiLogLine {
  id: string;
  timestamp: string; // RFC 3339
  agentId?: string;
  stdtype?: string;
  log: string;
}

// Splits Determined's log stream (NDJSON: {"result": line} each) into complete lines and the
// unfinished rest. An `{"error": {"message"}}` line (the master's way of ending a stream that
// failed) throws.
export function splitNdjson(text: string): { lines: LogLine[]; rest: string } {
  const parts = text.split("\n");
  const rest = parts.pop() ?? "";
  const lines: LogLine[] = [];
  for (const part of parts) {
    if (!part.trim()) continue;
    const item = JSON.parse(part) as { result?: ApiLogLine; error?: { message?: string } };
    if (item.error) throw new ApiError(500, item.error.message ?? "the log stream failed");
    if (!item.result) continue;
    const r = item.result;
    lines.push({
      id: Number(r.id),
      timestamp: timeNs(r.timestamp),
      agent: r.agentId ?? "",
      stdtype: r.stdtype ?? "",
      log: r.log,
    });
  }
  return { lines, rest };
}

// Follows a task's log (NDJSON, one line object per line) from after line `afterId` until the
// task ends (resolves) or `signal` aborts; fails with the master's reason otherwise.
export async function followLogs(
  taskId: string,
  afterId: number,
  onLine: (line: LogLine) => void,
  signal: AbortSignal,
): Promise<void> {
  const token = localStorage.getItem(TOKEN_KEY) ?? "";
  const after = afterId > 0 ? `&afterId=${afterId}` : "";
  const response = await fetch(
    `/api/v1/tasks/${encodeURIComponent(taskId)}/logs?follow=true${after}`,
    { headers: { Authorization: `Bearer ${token}` }, signal },
  );
  if (!response.ok || !response.body) {
    const body = (await response.json().catch(() => null)) as { message?: string } | null;
    if (response.status === 401 && localStorage.getItem(TOKEN_KEY) === token) forget();
    throw new ApiError(response.status, body?.message ?? `cannot follow the logs (${response.status})`);
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let pending = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    const { lines, rest } = splitNdjson(pending + decoder.decode(value, { stream: true }));
    pending = rest;
    lines.forEach(onLine);
  }
}

export interface LogLine {
  id: number;
  timestamp: number; // Unix nanoseconds
  agent: string;
  stdtype: string;
  log: string;
}

// The lab's bench page. The driver (../nmbrowser) opens bench.html and calls the functions of
// `globalThis.bench` through the DevTools protocol (Runtime.evaluate, awaitPromise,
// returnByValue). Every wait here is bounded by a timer, so a silent host ends a call with an
// error instead of hanging it; timing happens only here, with performance.now(), which has
// 5 µs steps because the manifest makes this page cross-origin isolated.
"use strict";

// SPEC §5: echo requests carry seq 100000..999999, so every request of a run has one size.
const SEQ_BASE = 100000;
const SEQ_SPAN = 900000;

// ---- JSON equality (docs/decisions.md): members as sets, numbers as doubles -------------

function jsonEqual(a, b) {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    return a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]));
  }
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((k) => Object.prototype.hasOwnProperty.call(b, k) && jsonEqual(a[k], b[k]));
}

function excerpt(value) {
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text.length > 160 ? text.slice(0, 160) + "…" : text;
}

// ---- the requests of a run and their checks ---------------------------------------------

// One workload of a run: the message for operation n, and two checks of its reply. The first
// `checkFull` replies are compared in full as JSON; later ones by a constant-time check (echo:
// op, seq and the text's length; ping: the whole reply, which is tiny), as the native driver
// checks later replies by length.
function requestsFor(op, text) {
  if (op === "ping") {
    const ping = { op: "ping" };
    const pong = { op: "pong" };
    const isPong = (r) => jsonEqual(r, pong);
    return { message: () => ping, full: (r) => isPong(r), light: (r) => isPong(r) };
  }
  if (op === "echo") {
    const seqOf = (n) => SEQ_BASE + (n % SEQ_SPAN);
    return {
      message: (n) => ({ op: "echo", data: { seq: seqOf(n), text } }),
      full: (r, n) => jsonEqual(r, { op: "echo", data: { seq: seqOf(n), text } }),
      light: (r, n) =>
        r !== null &&
        typeof r === "object" &&
        r.op === "echo" &&
        r.data !== null &&
        typeof r.data === "object" &&
        r.data.seq === seqOf(n) &&
        typeof r.data.text === "string" &&
        r.data.text.length === text.length,
    };
  }
  throw new Error(`unknown op ${JSON.stringify(op)}`);
}

// Shared bookkeeping of a closed loop: warm-up ops first (checked, not timed), then the
// measured ones. `sent` is when operation `done` was sent.
class Loop {
  constructor(cfg) {
    this.cfg = cfg;
    this.req = requestsFor(cfg.op, cfg.text);
    this.total = cfg.warmup + cfg.iterations;
    this.latencies = new Array(cfg.iterations);
    this.done = 0;
    this.sent = 0;
    this.startedAt = 0;
    this.fullCheckMs = 0;
    this.checked = { full: 0, light: 0 };
  }

  // Records the reply to operation `done`; returns an error message or null.
  reply(value, at) {
    const n = this.done;
    const measured = n >= this.cfg.warmup;
    if (measured) this.latencies[n - this.cfg.warmup] = Math.round((at - this.sent) * 1000);
    const full = n - this.cfg.warmup < this.cfg.checkFull; // warm-up replies: always in full
    let ok;
    if (full) {
      const t = performance.now();
      ok = this.req.full(value, n);
      if (measured) this.fullCheckMs += performance.now() - t;
    } else {
      ok = this.req.light(value, n);
    }
    if (!ok) return `reply ${n + 1} of ${this.total} is wrong: ${excerpt(value)}`;
    if (measured) this.checked[full ? "full" : "light"] += 1;
    this.done += 1;
    if (this.done === this.cfg.warmup) this.startedAt = performance.now();
    return null;
  }

  finished() {
    return this.done === this.total;
  }

  result() {
    return {
      latenciesUs: this.latencies,
      // Closed-loop time of the measured operations, less the full checks (which a real
      // extension would not do); the cheap checks stay in, as in the native driver.
      elapsedMs: performance.now() - this.startedAt - this.fullCheckMs,
      fullCheckMs: this.fullCheckMs,
      checked: this.checked,
    };
  }

  progress() {
    return `after ${this.done} of ${this.total} replies`;
  }
}

function validate(cfg) {
  for (const k of ["warmup", "iterations", "checkFull", "timeoutMs"]) {
    if (!Number.isInteger(cfg[k]) || cfg[k] < 0) throw new Error(`${k} must be an integer ≥ 0`);
  }
  if (cfg.iterations < 1) throw new Error("iterations must be at least 1");
}

// ---- connectNative: one host for the whole run --------------------------------------------

let port = null;
let portError = null; // why the port closed, once it has

function open(host) {
  if (port !== null) throw new Error("a port is already open");
  portError = null;
  port = chrome.runtime.connectNative(host);
  const mine = port;
  mine.onDisconnect.addListener(() => {
    portError = chrome.runtime.lastError ? chrome.runtime.lastError.message : "disconnected";
    if (port === mine) port = null;
  });
  return true;
}

function runPort(cfg) {
  validate(cfg);
  if (port === null) throw new Error(`no open port (${portError ?? "open() first"})`);
  const p = port;
  const loop = new Loop(cfg);
  return new Promise((resolve, reject) => {
    let timer = null;
    const finish = (error) => {
      clearTimeout(timer);
      p.onMessage.removeListener(onMessage);
      p.onDisconnect.removeListener(onDisconnect);
      if (error) reject(new Error(error));
      else resolve(loop.result());
    };
    const send = () => {
      loop.sent = performance.now();
      p.postMessage(loop.req.message(loop.done));
    };
    const onMessage = (value) => {
      const at = performance.now();
      const error = loop.reply(value, at);
      if (error) finish(error);
      else if (loop.finished()) finish(null);
      else send();
    };
    const onDisconnect = () => {
      const why = chrome.runtime.lastError ? chrome.runtime.lastError.message : "disconnected";
      finish(`the port closed ${loop.progress()}: ${why}`);
    };
    timer = setTimeout(() => finish(`timed out ${loop.progress()}`), cfg.timeoutMs);
    p.onMessage.addListener(onMessage);
    p.onDisconnect.addListener(onDisconnect);
    if (cfg.warmup === 0) loop.startedAt = performance.now();
    send();
  });
}

function close() {
  const wasOpen = port !== null;
  if (wasOpen) port.disconnect();
  port = null;
  return { wasOpen, error: portError };
}

// ---- sendNativeMessage: one host process per message ---------------------------------------

function runSend(host, cfg) {
  validate(cfg);
  const loop = new Loop(cfg);
  return new Promise((resolve, reject) => {
    let over = false;
    const finish = (error) => {
      if (over) return;
      over = true;
      clearTimeout(timer);
      if (error) reject(new Error(error));
      else resolve(loop.result());
    };
    const send = () => {
      loop.sent = performance.now();
      chrome.runtime.sendNativeMessage(host, loop.req.message(loop.done), onReply);
    };
    const onReply = (value) => {
      const at = performance.now();
      if (over) return;
      if (chrome.runtime.lastError) {
        finish(`sendNativeMessage failed ${loop.progress()}: ${chrome.runtime.lastError.message}`);
        return;
      }
      const error = loop.reply(value, at);
      if (error) finish(error);
      else if (loop.finished()) finish(null);
      else send();
    };
    const timer = setTimeout(() => finish(`timed out ${loop.progress()}`), cfg.timeoutMs);
    if (cfg.warmup === 0) loop.startedAt = performance.now();
    send();
  });
}

// ---- probes for the browser-level conformance tests ---------------------------------------

// Opens a port, posts every message at once, and collects replies until `expect` arrived
// (then waits `lingerMs` more, to see whether the port stays open), the port closes, or
// `timeoutMs` passes. Returns what the extension saw: the replies and Chromium's error.
function probePort(host, messages, { expect, lingerMs, timeoutMs }) {
  return new Promise((resolve) => {
    const replies = [];
    let error = null;
    let timedOut = false;
    let timer = null;
    let lingering = false;
    const p = chrome.runtime.connectNative(host);
    const finish = () => {
      clearTimeout(timer);
      p.onMessage.removeListener(onMessage);
      if (error === null) p.disconnect();
      resolve({ replies, error, timedOut });
    };
    const onMessage = (value) => {
      replies.push(value);
      if (replies.length >= expect && !lingering) {
        lingering = true;
        clearTimeout(timer);
        timer = setTimeout(finish, lingerMs);
      }
    };
    p.onMessage.addListener(onMessage);
    p.onDisconnect.addListener(() => {
      error = chrome.runtime.lastError ? chrome.runtime.lastError.message : "disconnected";
      finish();
    });
    timer = setTimeout(() => {
      timedOut = true;
      finish();
    }, timeoutMs);
    for (const m of messages) p.postMessage(m);
  });
}

// One sendNativeMessage: the reply, or chrome.runtime.lastError's message.
function probeSend(host, message, timeoutMs) {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ timedOut: true }), timeoutMs);
    chrome.runtime.sendNativeMessage(host, message, (reply) => {
      clearTimeout(timer);
      if (chrome.runtime.lastError) resolve({ error: chrome.runtime.lastError.message });
      else resolve({ reply });
    });
  });
}

// Summary of a big reply, so a 1 MiB string need not cross the DevTools pipe to be checked.
function describeFill(reply) {
  const data = reply && reply.data;
  return {
    keys: reply && typeof reply === "object" ? Object.keys(reply).sort() : null,
    op: reply ? reply.op : undefined,
    dataLength: typeof data === "string" ? data.length : null,
    onlyX: typeof data === "string" && /^x*$/.test(data),
  };
}

async function probeFill(host, bytes, timeoutMs) {
  const got = await probePort(host, [{ op: "fill", bytes }], {
    expect: 1,
    lingerMs: 0,
    timeoutMs,
  });
  return { ...got, replies: got.replies.map(describeFill) };
}

// ---- the timer ------------------------------------------------------------------------------

// The smallest step performance.now() takes, in µs, sampled for `ms` milliseconds.
function timerStepUs(ms = 20) {
  let smallest = Infinity;
  const end = performance.now() + ms;
  let last = performance.now();
  for (let now = last; now < end; now = performance.now()) {
    if (now > last) {
      smallest = Math.min(smallest, now - last);
      last = now;
    }
  }
  return Math.round(smallest * 1000 * 1000) / 1000;
}

function info() {
  return {
    crossOriginIsolated: globalThis.crossOriginIsolated === true,
    timerStepUs: timerStepUs(),
    extensionId: chrome.runtime.id,
    userAgent: navigator.userAgent,
  };
}

globalThis.bench = {
  ready: true,
  info,
  open,
  runPort,
  close,
  runSend,
  probePort,
  probeSend,
  probeFill,
};

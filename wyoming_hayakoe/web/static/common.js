"use strict";
// Shared helpers of the pages: words, JSON calls, messages, streamed speech.
const WORDS = JSON.parse(document.getElementById("page-words").textContent);
const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// The page's own endpoints answer {"error": ...}; the VOICEVOX API {"detail": ...}, a text,
// a list of bad fields, or (AquesTalk-like kana) an object with its text.
async function errorText(response) {
  try {
    const body = await response.json();
    if (body && body.error) return body.error;
    const detail = body && body.detail;
    if (typeof detail === "string") return detail;
    if (Array.isArray(detail)) return detail.map((d) => `${(d.loc || []).join(".")}: ${d.msg}`).join("; ");
    if (detail && detail.text) return detail.text;
  } catch (err) { /* not JSON */ }
  return `HTTP ${response.status}`;
}

// Every URL is relative: the page may live under Home Assistant's ingress prefix.
async function api(path, options) {
  const init = Object.assign({}, options);
  if (init.json !== undefined) {
    init.body = JSON.stringify(init.json);
    init.headers = { "Content-Type": "application/json" };
    delete init.json;
  }
  const response = await fetch(path, init);
  if (!response.ok) throw new Error(await errorText(response));
  return response.json();
}

// A request whose answer is not JSON (a 204): only its status is checked.
async function fetchOk(path, init) {
  const response = await fetch(path, init);
  if (!response.ok) throw new Error(await errorText(response));
  return response;
}

// Figures or a technical detail folded away behind the page's "Details", a paragraph each.
function folded(...lines) {
  return el("details", { class: "figures" }, el("summary", {}, WORDS.details),
    ...lines.map((line) => el("p", {}, line)));
}

// A message box: a text, or nodes (a text with a link).
function showMessage(target, text, kind) {
  const box = typeof target === "string" ? $(target) : target;
  if (!text || (Array.isArray(text) && !text.length)) { box.hidden = true; return; }
  box.replaceChildren(...[].concat(text));
  box.className = "message " + (kind || "");
  box.hidden = false;
}

function formatBytes(bytes) {
  if (bytes === null || bytes === undefined) return "–";
  const units = ["B", "KB", "MB", "GB"];
  let value = bytes, unit = 0;
  while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit++; }
  return `${value.toFixed(unit ? 1 : 0)} ${units[unit]}`;
}

function formatSeconds(seconds) {
  return seconds === null || seconds === undefined ? "–" : `${seconds.toFixed(2)} s`;
}

function wavBlob(pcmParts, sampleRate) {
  const size = pcmParts.reduce((sum, part) => sum + part.byteLength, 0);
  const header = new DataView(new ArrayBuffer(44));
  const text = (offset, value) => [...value].forEach((c, i) => header.setUint8(offset + i, c.charCodeAt(0)));
  text(0, "RIFF"); header.setUint32(4, 36 + size, true); text(8, "WAVE"); text(12, "fmt ");
  header.setUint32(16, 16, true); header.setUint16(20, 1, true); header.setUint16(22, 1, true);
  header.setUint32(24, sampleRate, true); header.setUint32(28, sampleRate * 2, true);
  header.setUint16(32, 2, true); header.setUint16(34, 16, true); text(36, "data");
  header.setUint32(40, size, true);
  return new Blob([header.buffer, ...pcmParts], { type: "audio/wav" });
}

// The installed voices as VOICEVOX speakers (the default voice first), each style with its id.
async function speakers() {
  return api("speakers");
}

// Speech through the VOICEVOX API: /audio_query for the text and style id, the query's
// fields changed by `fields`, then /synthesis?stream=true played piece by piece through
// WebAudio as it arrives. Resolves with the complete WAV once the server is done.
async function streamSpeech({ text, speaker, fields }, { play = true, signal, onFirstSound } = {}) {
  const started = performance.now();
  const params = new URLSearchParams({ text, speaker });
  const query = await api(`audio_query?${params}`, { method: "POST", signal });
  Object.assign(query, fields || {});
  const response = await fetch(`synthesis?${new URLSearchParams({ speaker, stream: "true" })}`, {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify(query), signal,
  });
  if (!response.ok) throw new Error(await errorText(response));
  const reader = response.body.getReader();
  let context = null, rate = 0;
  const parts = [];
  let header = new Uint8Array(0), carry = null, nextTime = 0, firstSound = null;
  const schedule = (bytes) => {
    if (firstSound === null) {
      firstSound = (performance.now() - started) / 1000;
      if (onFirstSound) onFirstSound(firstSound);
    }
    if (!context) return;
    const samples = new Int16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 2);
    const buffer = context.createBuffer(1, samples.length, rate);
    const channel = buffer.getChannelData(0);
    for (let i = 0; i < samples.length; i++) channel[i] = samples[i] / 32768;
    const source = context.createBufferSource();
    source.buffer = buffer;
    source.connect(context.destination);
    nextTime = Math.max(nextTime, context.currentTime + 0.05);
    source.start(nextTime);
    nextTime += buffer.duration;
  };
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      let bytes = value;
      if (!rate) {  // the 44-byte WAV header first: its sample rate is at byte 24
        const joined = new Uint8Array(header.length + bytes.length);
        joined.set(header); joined.set(bytes, header.length);
        if (joined.length < 44) { header = joined; continue; }
        rate = new DataView(joined.buffer).getUint32(24, true);
        bytes = joined.subarray(44);
        if (play && window.AudioContext) {
          try { context = new AudioContext({ sampleRate: rate }); } catch (err) { context = null; }
        }
      }
      if (carry) { const joined = new Uint8Array(carry.length + bytes.length); joined.set(carry); joined.set(bytes, carry.length); bytes = joined; carry = null; }
      if (bytes.length % 2) { carry = bytes.slice(bytes.length - 1); bytes = bytes.subarray(0, bytes.length - 1); }
      if (!bytes.length) continue;
      const copy = bytes.slice();
      parts.push(copy);
      schedule(copy);
    }
  } catch (err) {
    if (context) context.close();
    throw err;
  }
  const samples = parts.reduce((sum, part) => sum + part.byteLength, 0) / 2;
  return {
    blob: wavBlob(parts, rate), rate, samples, context, firstSound,
    total: (performance.now() - started) / 1000,
  };
}

// Long work on the server (downloads, first-start compiles): a bar per piece of work with its
// step, above every page, from api/progress (polled; faster while something runs).
function fillWords(text, values) {
  return text.replace(/\{(\w+)\}/g, (match, key) => (key in values ? values[key] : match));
}

function formatDuration(seconds) {
  if (seconds < 60) return `${Math.round(seconds)} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${String(Math.round(seconds % 60)).padStart(2, "0")} s`;
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, "0")} min`;
}

function workItem(work) {
  const heading = `${work.kind === "compile" ? WORDS.work_compile : WORDS.work_download}: ${work.what}`;
  const counted = work.kind === "download" ? WORDS.work_file : WORDS.work_step;
  const number = work.step_number
    ? fillWords(work.steps ? counted : WORDS.work_step_only, { number: work.step_number, steps: work.steps })
    : null;
  // The bar is the whole work; the numbers are the current file's.
  const amounts = [];
  if (work.total_bytes) {
    const percent = Math.floor((100 * work.done_bytes) / work.total_bytes);
    amounts.push(`${formatBytes(work.done_bytes)} / ${formatBytes(work.total_bytes)} (${percent}%)`);
  }
  amounts.push(work.eta_seconds !== null
    ? fillWords(WORDS.work_left, { time: formatDuration(work.eta_seconds) })
    : fillWords(WORDS.work_elapsed, { time: formatDuration(work.elapsed_seconds) }));
  // Without a fraction the bar is indeterminate (a compile step of unknown length).
  const bar = el("progress", work.percent !== null ? { max: 100, value: work.percent } : {});
  return el("div", { class: "item" },
    el("strong", {}, heading),
    el("span", { class: "step" }, [number, work.step].filter(Boolean).join(" · ")),
    bar,
    el("span", { class: "amounts muted" }, amounts.join(" · ")));
}

async function watchWork() {
  let running = false;
  try {
    const { work } = await api("api/progress");
    running = work.length > 0;
    $("work").replaceChildren(...work.map(workItem));
    $("work").hidden = !running;
  } catch (err) { /* the server is restarting: try again later */ }
  setTimeout(watchWork, running ? 1000 : 4000);
}

watchWork();

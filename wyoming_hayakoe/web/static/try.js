"use strict";
// Try page: synthesize with any voice, style and setting; the audio plays as it streams.
let voices = [];
let running = null;

function fillStyles() {
  const voice = voices.find((v) => v.name === $("voice").value);
  const styles = voice ? voice.styles : [];
  $("style").replaceChildren(...styles.map((s) => el("option", { value: s }, s)));
}

async function loadVoices() {
  try {
    voices = await installedVoices();
    $("voice").replaceChildren(...voices.map((v) => el("option", { value: v.name, selected: v.default }, v.name)));
    fillStyles();
  } catch (err) {
    showMessage("message", err.message, "error");
  }
}

function request() {
  const body = { text: $("text").value, voice: $("voice").value, style: $("style").value };
  for (const key of ["length_scale", "sdp_ratio", "noise_scale", "noise_scale_w", "style_weight"]) {
    const value = parseFloat($(key).value);
    if (!Number.isNaN(value)) body[key] = value;
  }
  return body;
}

async function play(event) {
  event.preventDefault();
  stop();
  showMessage("message", "");
  $("result").hidden = false;
  $("save-wav").hidden = true;
  for (const id of ["first-sound", "total-time", "audio-length"]) $(id).textContent = "–";
  const controller = new AbortController();
  running = { controller, context: null };
  $("play").disabled = true;
  $("stop").disabled = false;
  try {
    const result = await streamSpeech(request(), {
      signal: controller.signal,
      onFirstSound: (seconds) => { $("first-sound").textContent = formatSeconds(seconds); },
    });
    running.context = result.context;
    $("total-time").textContent = formatSeconds(result.total);
    $("audio-length").textContent = formatSeconds(result.samples / result.rate);
    const url = URL.createObjectURL(result.blob);
    $("audio").src = url;
    $("save-wav").href = url;
    $("save-wav").hidden = false;
  } catch (err) {
    if (err.name !== "AbortError") showMessage("message", err.message, "error");
  } finally {
    $("play").disabled = false;
  }
}

function stop() {
  if (!running) return;
  running.controller.abort();
  if (running.context) running.context.close();
  running = null;
  $("stop").disabled = true;
}

$("voice").addEventListener("change", fillStyles);
$("try-form").addEventListener("submit", play);
$("stop").addEventListener("click", stop);
loadVoices();

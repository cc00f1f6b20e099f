"use strict";
// Try page: any text, voice, style and setting, through the VOICEVOX API (/audio_query, then
// /synthesis); the audio plays as it streams.
let voices = [];
let running = null;
const FIELDS = ["speedScale", "intonationScale", "tempoDynamicsScale", "pitchScale", "volumeScale",
  "noiseScale", "noiseScaleW"];

function fillStyles() {
  const voice = voices.find((v) => v.speaker_uuid === $("voice").value);
  const styles = voice ? voice.styles : [];
  $("style").replaceChildren(...styles.map((s) => el("option", { value: s.id }, s.name)));
  showStyleId();
}

function showStyleId() {
  $("style-id").textContent = $("style").value || "–";
}

async function loadVoices() {
  try {
    voices = await speakers();
    $("voice").replaceChildren(...voices.map((v) => el("option", { value: v.speaker_uuid }, v.name)));
    fillStyles();
  } catch (err) {
    showMessage("message", err.message, "error");
  }
}

// The query's fields the form sets; an empty field keeps the server's default.
function fields() {
  const chosen = {};
  for (const key of FIELDS) {
    const value = parseFloat($(key).value);
    if (!Number.isNaN(value)) chosen[key] = value;
  }
  return chosen;
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
    const request = { text: $("text").value, speaker: $("style").value, fields: fields() };
    const result = await streamSpeech(request, {
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
$("style").addEventListener("change", showStyleId);
$("try-form").addEventListener("submit", play);
$("stop").addEventListener("click", stop);
loadVoices();

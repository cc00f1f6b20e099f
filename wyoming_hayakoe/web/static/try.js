"use strict";
// Try page: any text, voice, style and setting, through the VOICEVOX API (/audio_query, then
// /synthesis); the audio plays as it streams.
let voices = [];
let running = null;
let stateCheck = null;
const RECHECK_MS = 5000; // a voice that cannot be served may be soon (a download, a retry)
const FIELDS = ["speedScale", "intonationScale", "tempoDynamicsScale", "pitchScale", "volumeScale",
  "noiseScale", "noiseScaleW"];

function fillStyles() {
  const voice = voices.find((v) => v.speaker_uuid === $("voice").value);
  const styles = voice ? voice.styles : [];
  $("style").replaceChildren(...styles.map((s) => el("option", { value: s.id }, s.name)));
  showStyleId();
  checkVoice();
}

// Play is off while nothing could play: no voice installed, or the chosen voice waiting for a
// background retry (a request would be refused at once); the page says why (the Voices page's
// reason) and looks again a little later. A voice that failed otherwise (a damaged file) keeps
// Play: its reason is shown, and a request tries it again.
async function checkVoice() {
  clearTimeout(stateCheck);
  let reason = [];
  let blocked = false;
  try {
    const { voices: listed } = await api("api/voices");
    if (!voices.length) {
      const fallback = listed.find((v) => v.default && v.unavailable);
      reason = [WORDS.no_voice_installed, " ", el("a", { href: "./" }, WORDS.open_voices)];
      if (fallback) {
        const who = fillWords(WORDS.default_voice_state, { name: fallback.name });
        reason.push(el("br"), `${who}: ${fallback.unavailable}`);
      }
      blocked = true;
    } else {
      const chosen = listed.find((v) => v.speaker_uuid && v.speaker_uuid === $("voice").value);
      if (chosen && chosen.unavailable) {
        reason = [`${WORDS.unavailable}: ${chosen.unavailable}`];
        blocked = chosen.retry_at !== null && chosen.retry_at !== undefined;
      }
    }
  } catch (err) {
    reason = [err.message];
    blocked = !voices.length;
  }
  showMessage("voice-state", reason, "error");
  $("play").disabled = blocked;
  if (reason.length) stateCheck = setTimeout(reloadVoices, RECHECK_MS);
}

// A voice may have been installed since: the list of speakers too.
async function reloadVoices() {
  const chosen = $("voice").value;
  try {
    voices = await speakers();
  } catch (err) {
    showMessage("voice-state", err.message, "error");
    stateCheck = setTimeout(reloadVoices, RECHECK_MS);
    return;
  }
  if (voices.length && !$("voice").options.length) {
    $("voice").replaceChildren(...voices.map((v) => el("option", { value: v.speaker_uuid }, v.name)));
    fillStyles();
    return;
  }
  if (chosen) $("voice").value = chosen;
  checkVoice();
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
    stateCheck = setTimeout(reloadVoices, RECHECK_MS);
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
    checkVoice(); // Play again, if the voice still can be served
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

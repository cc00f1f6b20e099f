"use strict";
// Dictionary page: the user dictionary (VOICEVOX's /user_dict API on user_dict.csv) as a table;
// each change previewed before and after (the reading before saving, the audio once saved).
let previewStyle = null;
let canClearTtsCache = false;  // Home Assistant's API given: the page clears its TTS cache

function wordRow(id, word) {
  return el("tr", { "data-surface": word.surface },
    el("td", {}, word.surface), el("td", {}, word.pronunciation), el("td", {}, word.accent_type),
    el("td", {}, WORDS.priority_value),
    el("td", {}, el("div", { class: "actions" },
      el("button", { type: "button", class: "secondary edit", onclick: () => edit(id, word) }, WORDS.edit),
      el("button", { type: "button", class: "danger delete", onclick: () => removeWord(id, word.surface) }, WORDS.delete))));
}

async function loadWords() {
  try {
    const status = await api("api/dictionary");
    if (!status.available) {
      showMessage("message", WORDS.dictionary_off, "error");
      $("word-form").hidden = true;
    }
    const words = Object.entries(await api("user_dict"));
    $("words").replaceChildren(...(words.length
      ? words.map(([id, word]) => wordRow(id, word))
      : [el("tr", {}, el("td", { colspan: 5, class: "muted" }, WORDS.no_words))]));
  } catch (err) {
    showMessage("message", err.message, "error");
  }
}

function edit(id, word) {
  $("replace").value = id;
  $("surface").value = word.surface;
  $("word-reading").value = word.pronunciation;
  $("accent").value = word.accent_type;
  $("example").value = word.surface;
  $("surface").focus();
}

function fields() {
  return { surface: $("surface").value, reading: $("word-reading").value, accent: parseInt($("accent").value, 10) };
}

function exampleText() {
  return $("example").value.trim() || $("surface").value.trim();
}

function draw(panel, reading) {
  const drawing = panel.querySelector(".drawing");
  drawing.replaceChildren(el("div", {}, el("div", { class: "kana" }, reading.kana), drawPhrases(reading.phrases)));
  drawing.dataset.kana = reading.kana;
  panel.hidden = false;
}

// The reading and the audio of the example sentence as the server reads it now.
async function render(panelId) {
  const panel = $(panelId);
  const text = exampleText();
  draw(panel, await sentenceReading(text));
  const audio = panel.querySelector("audio");
  audio.hidden = previewStyle === null;
  if (previewStyle !== null) {
    const quiet = { tempoDynamicsScale: 0, noiseScale: 0, noiseScaleW: 0 };
    const result = await streamSpeech({ text, speaker: previewStyle, fields: quiet }, { play: false });
    audio.dataset.samples = result.samples;
    audio.src = URL.createObjectURL(result.blob);
  }
}

// The reading the example sentence would have with the word, nothing saved yet (the audio
// comes with Save).
async function renderTried() {
  const panel = $("after");
  const phrases = await api("api/dictionary/try", { method: "POST", json: Object.assign(fields(), { text: exampleText() }) });
  draw(panel, phrasesReading(phrases));
  const audio = panel.querySelector("audio");
  audio.hidden = true;
  audio.removeAttribute("src");
  delete audio.dataset.samples;
}

// The word as the server would load it; a refused one is a sentence in the page's language
// with the server's reason folded away (then false).
async function checked() {
  try {
    await api("api/dictionary/check", { method: "POST", json: fields() });
    return true;
  } catch (err) {
    showMessage("message", [WORDS.word_refused, folded(err.message)], "error");
    return false;
  }
}

async function preview() {
  showMessage("message", "");
  if (!(await checked())) return;
  try {
    await render("before");
    await renderTried();
  } catch (err) {
    showMessage("message", err.message, "error");
  }
}

async function save(event) {
  event.preventDefault();
  showMessage("message", "");
  if (!(await checked())) return;
  try {
    if ($("before").hidden) await render("before");
    const word = fields();
    const params = new URLSearchParams({ surface: word.surface, pronunciation: word.reading, accent_type: word.accent });
    const id = $("replace").value;
    if (id) await fetchOk(`user_dict_word/${encodeURIComponent(id)}?${params}`, { method: "PUT" });
    else await fetchOk(`user_dict_word?${params}`, { method: "POST" });
    await render("after");
    showSaved();
    $("replace").value = "";
    await loadWords();
  } catch (err) {
    showMessage("message", err.message, "error");
  }
}

// Home Assistant replays the audio it keeps of a message: say so, with a button where the
// server may clear that cache itself.
function showSaved() {
  if (!canClearTtsCache) { showMessage("message", WORDS.saved, "ok"); return; }
  const button = el("button", { type: "button", id: "clear-tts-cache", class: "secondary", onclick: clearTtsCache },
    WORDS.clear_tts_cache);
  showMessage("message", [WORDS.saved_clear, " ", button], "ok");
}

async function clearTtsCache() {
  const response = await fetch("api/homeassistant/clear-tts-cache", { method: "POST" });
  if (response.ok) { showMessage("message", WORDS.tts_cache_cleared, "ok"); return; }
  let answer = {};
  try { answer = await response.json(); } catch (err) { answer = {}; }
  const sentence = WORDS["tts_cache_" + answer.reason] || WORDS.tts_cache_failed;
  showMessage("message", [sentence, folded(answer.error || response.statusText)], "error");
}

async function removeWord(id, surface) {
  if (!window.confirm(`${WORDS.delete}: ${surface}?`)) return;
  try {
    await fetchOk(`user_dict_word/${encodeURIComponent(id)}`, { method: "DELETE" });
    await loadWords();
  } catch (err) {
    showMessage("message", err.message, "error");
  }
}

async function chooseStyle() {
  try {
    const voices = await speakers();  // the default voice first
    previewStyle = voices.length && voices[0].styles.length ? voices[0].styles[0].id : null;
  } catch (err) {
    previewStyle = null;
  }
}

$("preview").addEventListener("click", preview);
$("word-form").addEventListener("submit", save);
for (const id of ["surface", "word-reading", "accent", "example"]) {
  $(id).addEventListener("input", () => { $("before").hidden = true; $("after").hidden = true; });
}
async function checkHomeAssistant() {
  try {
    canClearTtsCache = (await api("api/homeassistant")).clear_tts_cache === true;
  } catch (err) {
    canClearTtsCache = false;
  }
}

chooseStyle();
checkHomeAssistant();
loadWords();

"use strict";
// Dictionary page: the user dictionary as a table; each change previewed before and after.
let previewVoice = null;

function wordRow(entry) {
  return el("tr", { "data-surface": entry.surface },
    el("td", {}, entry.surface), el("td", {}, entry.reading), el("td", {}, entry.accent),
    el("td", {}, WORDS.priority_value),
    el("td", {}, el("div", { class: "actions" },
      el("button", { type: "button", class: "secondary edit", onclick: () => edit(entry) }, WORDS.edit),
      el("button", { type: "button", class: "danger delete", onclick: () => removeWord(entry.surface) }, WORDS.delete))));
}

async function loadWords() {
  try {
    const body = await api("api/dictionary");
    if (!body.available) {
      showMessage("message", WORDS.dictionary_off, "error");
      $("word-form").hidden = true;
    }
    $("words").replaceChildren(...(body.entries.length
      ? body.entries.map(wordRow)
      : [el("tr", {}, el("td", { colspan: 5, class: "muted" }, WORDS.no_words))]));
  } catch (err) {
    showMessage("message", err.message, "error");
  }
}

function edit(entry) {
  $("replace").value = entry.surface;
  $("surface").value = entry.surface;
  $("word-reading").value = entry.reading;
  $("accent").value = entry.accent;
  $("example").value = entry.surface;
  $("surface").focus();
}

function fields() {
  return {
    surface: $("surface").value, reading: $("word-reading").value,
    accent: parseInt($("accent").value, 10), replace: $("replace").value || null,
  };
}

// The reading and the audio of the example sentence as the server reads it now.
async function render(panelId) {
  const panel = $(panelId);
  const text = $("example").value.trim() || $("surface").value.trim();
  const reading = await api("api/reading", { method: "POST", json: { text } });
  const drawing = panel.querySelector(".drawing");
  drawing.replaceChildren(...reading.sentences.map((s) =>
    el("div", {}, el("div", { class: "kana" }, s.kana), drawPhrases(s.phrases))));
  drawing.dataset.kana = reading.sentences.map((s) => s.kana).join("");
  panel.hidden = false;
  if (previewVoice) {
    const result = await streamSpeech(
      { text, voice: previewVoice, sdp_ratio: 0, noise_scale: 0, noise_scale_w: 0 },
      { play: false });
    const audio = panel.querySelector("audio");
    audio.dataset.samples = result.samples;
    audio.src = URL.createObjectURL(result.blob);
  }
}

async function preview() {
  showMessage("message", "");
  try {
    await api("api/dictionary/check", { method: "POST", json: fields() });
    $("after").hidden = true;
    await render("before");
  } catch (err) {
    showMessage("message", err.message, "error");
  }
}

async function save(event) {
  event.preventDefault();
  showMessage("message", "");
  try {
    if ($("before").hidden) await render("before");
    await api("api/dictionary", { method: "PUT", json: fields() });
    await render("after");
    showMessage("message", WORDS.saved, "ok");
    $("replace").value = "";
    await loadWords();
  } catch (err) {
    showMessage("message", err.message, "error");
  }
}

async function removeWord(surface) {
  if (!window.confirm(`${WORDS.delete}: ${surface}?`)) return;
  try {
    await api("api/dictionary/delete", { method: "POST", json: { surface } });
    await loadWords();
  } catch (err) {
    showMessage("message", err.message, "error");
  }
}

async function chooseVoice() {
  try {
    const voices = await installedVoices();
    const chosen = voices.find((v) => v.default) || voices[0];
    previewVoice = chosen ? chosen.name : null;
  } catch (err) {
    previewVoice = null;
  }
}

$("preview").addEventListener("click", preview);
$("word-form").addEventListener("submit", save);
for (const id of ["surface", "word-reading", "accent", "example"]) {
  $(id).addEventListener("input", () => { $("before").hidden = true; $("after").hidden = true; });
}
chooseVoice();
loadWords();

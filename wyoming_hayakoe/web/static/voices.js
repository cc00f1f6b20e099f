"use strict";
// Voices page: catalog and installed voices, download with progress, delete, upload.

function voiceCard(voice) {
  const details = el("dl", {},
    el("dt", {}, WORDS.styles), el("dd", {}, voice.styles.join(", ") || "–"),
    el("dt", {}, WORDS.speakers), el("dd", {}, voice.speakers.join(", ") || "–"),
    el("dt", {}, WORDS.sample_rate), el("dd", {}, voice.sample_rate ? `${voice.sample_rate} Hz` : "–"),
    el("dt", {}, WORDS.license), el("dd", {}, voice.license || "–"),
    el("dt", {}, WORDS.attribution), el("dd", {}, voice.attribution_url
      ? el("a", { href: voice.attribution_url, target: "_blank", rel: "noopener" }, voice.attribution_name || voice.attribution_url)
      : (voice.attribution_name || "–")),
    el("dt", {}, WORDS.size), el("dd", {}, formatBytes(voice.size_bytes)),
    el("dt", {}, WORDS.decode_speed), el("dd", { class: "decode-speed" }, speedHere(voice)),
    el("dt", {}, WORDS.decoder), el("dd", { class: "decoder" }, decoderLine(voice.decoder)),
    el("dt", {}, WORDS.self_check), el("dd", { class: "self-check" }, selfCheck(voice)));
  const progress = el("progress", { max: 1, value: 0, hidden: true });
  // A failed download says why here, on its own card, where the button was pressed.
  const failure = el("p", { class: "card-error", role: "alert", hidden: true });
  const actions = el("div", { class: "actions" });
  if (!voice.installed && voice.in_catalog) {
    actions.append(el("button", { type: "button", class: "download", onclick: (event) => download(voice.name, event.target, progress, failure) }, WORDS.download));
  }
  if (voice.deletable) {
    actions.append(el("button", { type: "button", class: "danger delete", onclick: () => remove(voice.name) }, WORDS.delete));
  }
  const badges = el("span", {},
    voice.default ? el("span", { class: "badge" }, WORDS.default_voice) : null, " ",
    el("span", { class: "badge" + (voice.installed ? " on" : "") }, voice.installed ? WORDS.installed : WORDS.not_installed));
  const card = el("article", { class: "card", "data-voice": voice.name },
    el("h2", {}, el("span", {}, voice.name), badges),
    voice.description ? el("p", { class: "muted" }, voice.description) : null,
    voice.unavailable ? el("p", { class: "unavailable" }, `${WORDS.unavailable}: ${voice.unavailable}`) : null,
    details, progress, failure, actions);
  if (voice.downloading) download(voice.name, null, progress, failure, true);
  return card;
}

// One speed: how fast the voice is made here with the decoder in use (as the server's schedule
// has seen it, else as measured when the decoder was chosen).
function speedHere(voice) {
  const decoder = voice.decoder;
  const chosen = decoder && (decoder.fast ? decoder.fast_speed : decoder.reference_speed);
  return timesSpeech(voice.decode_speed || chosen);
}

function timesSpeech(speed) {
  return speed ? fillWords(WORDS.speed_value, { value: speed.toFixed(1) }) : "–";
}

// Which decoder serves the voice and why in one line; what was measured behind a detail.
function decoderLine(decoder) {
  if (!decoder) return "–";
  const name = decoder.fast ? WORDS.decoder_fast : WORDS.decoder_reference;
  const why = WORDS[`decoder_why_${decoder.why}`] || decoder.why;
  const figures = [`${WORDS.decoder_speeds}: ${WORDS.decoder_reference_short} ` +
    timesSpeech(decoder.reference_speed) +
    (decoder.fast_speed ? `, ${WORDS.decoder_fast_short} ${timesSpeech(decoder.fast_speed)}` : "")];
  const gate = decoder.gate;
  if (gate) {
    figures.push(`${WORDS.decoder_gate}: ${gate.passed ? WORDS.decoder_gate_passed : WORDS.decoder_gate_failed}, ` +
      `${gate.mean_db.toFixed(2)} dB (≤ ${gate.mean_threshold_db}) / ${gate.worst_db.toFixed(2)} dB (≤ ${gate.worst_threshold_db})`);
  }
  return [`${name} (${decoder.mode}): ${why}`, folded(...figures)];
}

// The self-check in the page's words: passed or not; by how much the compiled models differ
// from the published ones behind a detail.
function selfCheck(voice) {
  if (voice.self_check_passed === null || voice.self_check_passed === undefined) return "–";
  const verdict = voice.self_check_passed ? WORDS.self_check_passed : WORDS.self_check_failed;
  if (voice.self_check_difference === null || voice.self_check_difference === undefined) return verdict;
  const value = voice.self_check_difference ? voice.self_check_difference.toExponential(1) : "0";
  return [verdict, folded(fillWords(WORDS.self_check_difference, { value }))];
}

async function loadVoices() {
  try {
    const { voices } = await api("api/voices");
    $("voices").replaceChildren(...voices.map(voiceCard));
  } catch (err) {
    showMessage("message", err.message, "error");
  }
}

async function download(name, button, progress, failure, alreadyRunning) {
  if (button) button.disabled = true;
  progress.hidden = false;
  failure.hidden = true;
  try {
    if (!alreadyRunning) await api(`api/voices/${encodeURIComponent(name)}/download`, { method: "POST" });
    for (;;) {
      const status = await api(`api/voices/${encodeURIComponent(name)}/download`);
      if (status.total) progress.value = Math.min(status.done / status.total, 1);
      if (status.state === "error") throw new Error(status.error);
      if (status.state === "done") break;
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
    progress.value = 1;
    await loadVoices();
  } catch (err) {
    progress.hidden = true;
    // a sentence with the next step; the server's reason folded away
    failure.replaceChildren(WORDS.download_failed + WORDS.download_next_step,
      folded(err.message));
    failure.hidden = false;
    if (button) button.disabled = false;
  }
}

async function remove(name) {
  if (!window.confirm(`${WORDS.confirm_delete}\n${name}`)) return;
  try {
    await api(`api/voices/${encodeURIComponent(name)}`, { method: "DELETE" });
    await loadVoices();
  } catch (err) {
    showMessage("message", err.message, "error");
  }
}

function upload(event) {
  event.preventDefault();
  const form = new FormData();
  form.append("name", $("upload-name").value.trim());
  form.append("file", $("upload-file").files[0]);
  const bar = $("upload-progress");
  const request = new XMLHttpRequest();
  request.open("POST", "api/voices/upload");
  request.responseType = "json";
  request.upload.onprogress = (e) => { if (e.lengthComputable) bar.value = e.loaded / e.total; };
  request.onload = () => {
    bar.hidden = true;
    $("upload-button").disabled = false;
    const body = request.response || {};
    if (request.status >= 200 && request.status < 300) {
      showMessage("upload-message", `${WORDS.uploaded}: ${body.installed}`, "ok");
      $("upload-form").reset();
      loadVoices();
    } else {
      showMessage("upload-message", `${WORDS.error}: ${body.error || "HTTP " + request.status}`, "error");
    }
  };
  request.onerror = () => {
    bar.hidden = true;
    $("upload-button").disabled = false;
    showMessage("upload-message", `${WORDS.error}: network`, "error");
  };
  bar.hidden = false; bar.value = 0;
  $("upload-button").disabled = true;
  showMessage("upload-message", "");
  request.send(form);
}

$("upload-form").addEventListener("submit", upload);
loadVoices();

"use strict";
// Reading page: what the voice will say, sentence by sentence (the rewriting from api/reading,
// the kana and pitch accent of each sentence from the VOICEVOX API's /accent_phrases).

async function showReading(event) {
  if (event) event.preventDefault();
  showMessage("message", "");
  try {
    const reading = await api("api/reading", { method: "POST", json: { text: $("text").value } });
    const readings = await Promise.all(reading.sentences.map((s) => sentenceReading(s.text)));
    $("reading").replaceChildren(
      el("section", { class: "panel" }, el("h3", {}, WORDS.rewritten), rewritesView(reading)),
      ...reading.sentences.map((s, i) => sentenceView(s, readings[i])));
  } catch (err) {
    showMessage("message", err.message, "error");
  }
}

$("reading-form").addEventListener("submit", showReading);
showReading();

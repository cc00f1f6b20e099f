"use strict";
// Reading page: what the voice will say, sentence by sentence, with the pitch accent drawn.

async function showReading(event) {
  if (event) event.preventDefault();
  showMessage("message", "");
  try {
    const reading = await api("api/reading", { method: "POST", json: { text: $("text").value } });
    $("reading").replaceChildren(
      el("section", { class: "panel" }, el("h3", {}, WORDS.rewritten), rewritesView(reading)),
      ...reading.sentences.map(sentenceView));
  } catch (err) {
    showMessage("message", err.message, "error");
  }
}

$("reading-form").addEventListener("submit", showReading);
showReading();

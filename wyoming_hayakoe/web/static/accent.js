"use strict";
// Pitch accent drawings of VOICEVOX accent phrases (/accent_phrases): one SVG per phrase, a dot
// per spoken mora (filled high, hollow low) joined by a line, and a red triangle over the
// accent nucleus (the mora after which the pitch falls). The pitch follows from the accent by
// the Tokyo rule, as the server speaks it; marks (vowel "pau") are not drawn.
const SVG_NS = "http://www.w3.org/2000/svg";
const MORA_WIDTH = 26, HIGH_Y = 10, LOW_Y = 30, KANA_Y = 54;

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

function isMark(mora) { return mora.vowel === "pau"; }

// Which morae are high: accent 1 is high on the first mora only, any other accent low on the
// first and high from the second up to the accent.
function highMorae(phrase) {
  return phrase.moras.map((mora, i) =>
    !isMark(mora) && (phrase.accent === 1 ? i === 0 : i > 0 && i < phrase.accent));
}

function drawPhrase(phrase) {
  const highs = highMorae(phrase);
  const spoken = phrase.moras.map((m, i) => i).filter((i) => !isMark(phrase.moras[i]));
  const morae = spoken.map((i) => phrase.moras[i].text);
  const high = spoken.map((i) => highs[i]);
  const last = spoken.length ? spoken[spoken.length - 1] : -1;
  const nucleus = phrase.accent - 1 < last ? spoken.indexOf(phrase.accent - 1) + 1 : 0;
  const count = morae.length;
  const width = Math.max(count, 1) * MORA_WIDTH;
  const drawing = svg("svg", {
    class: "accent", width, height: 62, viewBox: `0 -4 ${width} 66`, role: "img",
    "aria-label": morae.map((m, i) => m + (high[i] ? "↑" : "↓")).join(""),
    "data-nucleus": nucleus,
  });
  const x = (i) => i * MORA_WIDTH + MORA_WIDTH / 2;
  const y = (i) => (high[i] ? HIGH_Y : LOW_Y);
  const points = morae.map((_, i) => `${x(i)},${y(i)}`).join(" ");
  drawing.append(svg("polyline", { class: "line", points }));
  morae.forEach((mora, i) => {
    drawing.append(svg("circle", { class: high[i] ? "high" : "low", cx: x(i), cy: y(i), r: 4.5 }));
    drawing.append(svg("text", { x: x(i), y: KANA_Y }, mora));
  });
  if (nucleus > 0 && nucleus <= count) {
    const cx = x(nucleus - 1);
    drawing.append(svg("path", { class: "nucleus", d: `M${cx - 5},-3 L${cx + 5},-3 L${cx},4 Z` }));
  }
  return drawing;
}

function drawPhrases(phrases) {
  const spoken = phrases.filter((p) => p.moras.some((m) => !isMark(m)));
  return el("div", { class: "phrases" }, spoken.map(drawPhrase));
}

// A reading from accent phrases as the VOICEVOX API gives them: the phrases and their kana.
function phrasesReading(phrases) {
  return { phrases, kana: phrases.map((p) => p.moras.map((m) => m.text).join("")).join("") };
}

// The kana and accent phrases of one sentence, from the VOICEVOX API.
async function sentenceReading(text) {
  return phrasesReading(await api(`accent_phrases?${new URLSearchParams({ text })}`, { method: "POST" }));
}

// A rule's name in the page's language: "単位: %", "ユーザー辞書 4行目".
function ruleLabel(rule) {
  const key = (prefix, name) => WORDS[prefix + name.replace(/[^A-Za-z0-9]+/g, "_")];
  const kind = key("rule_", rule.kind) || rule.kind;
  if (rule.line) return WORDS.rule_line.replace("{kind}", kind).replace("{line}", rule.line);
  const detail = rule.detail && (key("rule_detail_", rule.detail) || rule.detail);
  return detail ? `${kind}: ${detail}` : kind;
}

// The rewritten text, each rewritten word with the rule or table entry that made it.
function rewritesView(reading) {
  const box = el("p", { class: "rewrites" });
  let shown = false;
  for (const piece of reading.rewrites) {
    if (!piece.rules.length) { box.append(piece.to); continue; }
    shown = true;
    const rules = el("small", { class: "rule" }, piece.rules.map(ruleLabel).join(", "));
    const kept = piece.from === piece.to;
    box.append(el("span", { class: kept ? "rewrite kept" : "rewrite", title: piece.from },
      piece.from && !kept ? [el("s", {}, piece.from), " → "] : null, el("b", {}, piece.to), rules));
  }
  return shown ? box : el("p", { class: "muted" }, WORDS.no_rewrites);
}

function sentenceView(sentence, reading) {
  const field = (label, value, cls) =>
    el("div", { class: "field" }, el("span", { class: "label" }, label), el("span", { class: cls || "" }, value));
  return el("section", { class: "panel sentence" },
    field(WORDS.normalized, sentence.normalized),
    field(WORDS.kana, reading.kana, "kana"),
    el("div", { class: "field" }, el("span", { class: "label" }, WORDS.accent), drawPhrases(reading.phrases)));
}

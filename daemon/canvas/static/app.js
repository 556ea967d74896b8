// codemem canvas page: draws /graph with Cytoscape (fcose layout), pulses nodes named by events
// from the /events WebSocket. Plain browser script, no build step; libraries come from /lib/.
/* global cytoscape, cytoscapeFcose */
"use strict";

// Page state for tests and curious users: read it from the console or from Playwright.
const state = (window.__codemem = { cy: null, learned: { synapse: 0, cochange: 0 }, ready: false, nodeCount: 0, edgeCount: 0, summarised: false, pulses: [], lastEvent: null, events: 0, connected: false });

const PULSE_MS = 1500;
const MAX_PULSES = 1000;
const MAX_LOG = 60;
// Distinct on a dark background; beyond these, golden-angle hues.
const PALETTE = ["#61afef", "#e06c75", "#98c379", "#e5c07b", "#c678dd", "#56b6c2", "#d19a66", "#f78fb3", "#7bd88f", "#a9b1ff", "#ff9e64", "#4fd6be", "#c3e88d", "#ffcb6b", "#82aaff", "#f07178"];
const colourOf = (community) => {
  if (community < 0) return "#8792a2";
  return community < PALETTE.length ? PALETTE[community] : `hsl(${(community * 137.508) % 360}, 65%, 62%)`;
};

cytoscape.use(cytoscapeFcose);

const cy = cytoscape({
  container: document.getElementById("graph"),
  minZoom: 0.05,
  maxZoom: 6,
  style: [
    {
      selector: "node",
      style: {
        "background-color": "data(colour)",
        width: "data(size)",
        height: "data(size)",
        label: "",
        color: "#e6ebf2",
        "font-size": "data(font)",
        "text-valign": "bottom",
        "text-margin-y": 3,
        "text-outline-color": "#11151c",
        "text-outline-width": 2,
        "border-width": 0,
        "border-color": "#ffd166",
        "transition-property": "width, height, border-width, background-color",
        "transition-duration": "250ms",
      },
    },
    { selector: "node[type = 'community']", style: { shape: "round-rectangle", "background-opacity": 0.55, "font-weight": "bold", "text-valign": "center", "text-margin-y": 0 } },
    { selector: "node[type = 'module']", style: { shape: "round-rectangle" } },
    { selector: "node[type = 'class'], node[type = 'interface'], node[type = 'type']", style: { shape: "diamond" } },
    {
      selector: "edge",
      style: { width: 1, "line-color": "data(colour)", opacity: 0.35, "curve-style": "haystack", "haystack-radius": 0 },
    },
    { selector: "edge[type = 'contains'], edge[type = 'member']", style: { opacity: 0.18 } },
    // Learned links, drawn over the code graph and left out of its layout: dashed amber for what
    // sessions used together, dotted violet for what the git history changed together.
    {
      selector: "edge[type = 'synapse'], edge[type = 'cochange']",
      style: { "curve-style": "bezier", width: (e) => 1 + 3 * e.data("weight"), opacity: 0.85, "z-index": 10 },
    },
    { selector: "edge[type = 'synapse']", style: { "line-style": "dashed", "line-color": "#f6b73c" } },
    { selector: "edge[type = 'cochange']", style: { "line-style": "dotted", "line-color": "#c678dd" } },
    {
      selector: "node.pulse",
      style: {
        width: (n) => n.data("size") * 2,
        height: (n) => n.data("size") * 2,
        "border-width": 4,
        "background-color": "#ffd166",
        "underlay-color": "#ffd166",
        "underlay-opacity": 0.3,
        "underlay-padding": 12,
        "underlay-shape": "ellipse",
        label: "data(label)",
        "z-index": 999,
        "font-weight": "bold",
      },
    },
    { selector: "node.labelled", style: { label: "data(label)" } },
    { selector: "node.dim", style: { opacity: 0.15 } },
    { selector: "edge.dim", style: { opacity: 0.04 } },
  ],
});
state.cy = cy; // for tests and the console

// ---- graph --------------------------------------------------------------------------------------

let loading = null;
let again = false;

/** Fetches and draws the graph; a call during a load (a build event) schedules one more load. */
function loadGraph() {
  if (loading) {
    again = true;
    return loading;
  }
  loading = (async () => {
    do {
      again = false;
      await fetchAndDraw();
    } while (again);
  })().finally(() => (loading = null));
  return loading;
}

async function fetchAndDraw() {
  let res;
  try {
    res = await fetch("/graph", { cache: "no-store" });
  } catch (err) {
    showMessage(`Cannot reach the canvas server: ${err.message}`);
    return;
  }
  const body = await res.json();
  if (!res.ok) {
    cy.elements().remove();
    setCounts(0, 0, false);
    document.getElementById("stats").textContent = "no graph";
    showMessage(body.message || `graph unavailable (${res.status})`);
    renderLegend([]);
    return;
  }
  showMessage(null);
  draw(body);
}

function draw(view) {
  const communityOfNode = new Map(view.nodes.map((n) => [n.id, n.community]));
  const weightOf = (n) => (n.type === "community" ? n.members * 4 : n.degree);
  const rank = new Map([...view.nodes].sort((a, b) => weightOf(b) - weightOf(a)).map((n, r) => [n.id, r]));
  const elements = [];
  for (const n of view.nodes) {
    const size = n.type === "community" ? 26 + 9 * Math.log2(1 + n.members) : 10 + 5 * Math.log2(1 + n.degree);
    elements.push({
      group: "nodes",
      data: { id: n.id, label: n.label, type: n.type, community: n.community, file: n.file || "", colour: colourOf(n.community), size, rank: rank.get(n.id), font: 12 },
      position: startPosition(n, view.communities, rank.get(n.id)),
    });
  }
  let i = 0;
  for (const e of view.edges) {
    const cs = communityOfNode.get(e.source);
    const same = cs === communityOfNode.get(e.target);
    elements.push({ group: "edges", data: { id: `e${i++}`, source: e.source, target: e.target, type: e.type, weight: e.weight ?? 1, same, colour: same ? colourOf(cs) : "#5c6370" } });
  }
  state.learned = { synapse: view.edges.filter((e) => e.type === "synapse").length, cochange: view.edges.filter((e) => e.type === "cochange").length };
  cy.batch(() => {
    cy.elements().remove();
    cy.add(elements);
  });
  setCounts(view.nodes.length, view.edges.length, view.summarised);
  document.getElementById("stats").textContent = view.summarised
    ? `${view.totalNodes} nodes (showing ${view.nodes.length}: top by degree + one per community) · ${view.communities.length} communities`
    : `${view.totalNodes} nodes · ${view.totalEdges} edges · ${view.communities.length} communities`;
  renderLegend(view.communities);
  if (cy.nodes().length === 0) return;
  cy.elements().not("edge[type = 'synapse'], edge[type = 'cochange']").layout({
    name: "fcose",
    // "default" refines the spectral draft with a force pass: seconds at ~1,000 nodes, minutes at
    // a few thousand; beyond that the draft alone keeps the page responsive.
    quality: cy.nodes().length > 1000 || cy.edges().length > 3000 ? "draft" : "default",
    // From start positions that depend only on the graph: the same graph is drawn the same way at
    // every load (a random start moved every node on each reload).
    randomize: false,
    animate: false,
    nodeDimensionsIncludeLabels: false,
    // Short springs inside a community, long ones across: communities form visible clusters.
    idealEdgeLength: (e) => (e.data("same") ? 45 : 160),
    edgeElasticity: (e) => (e.data("same") ? 0.45 : 0.08),
    nodeRepulsion: () => 6500,
    nodeSeparation: 60,
    numIter: 2500,
    packComponents: true,
  }).run();
  cy.fit(undefined, 40);
  fitZoom = cy.zoom();
  sizeLabels(true);
}

/** A number in [0, 1) from a string (FNV-1a): the same id always lands in the same place. */
function unitHash(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0) / 4294967296;
}

/** Communities around a circle, each node on a small spiral around its community's place by rank. */
function startPosition(n, communities, rank) {
  const k = Math.max(1, communities.length);
  const i = Math.max(0, communities.findIndex((c) => c.id === n.community));
  const a = (2 * Math.PI * i) / k;
  const R = 120 * Math.sqrt(k);
  const t = 2.4 * (rank % 500) + 6.28 * unitHash(n.id);
  const r = 8 * Math.sqrt(1 + (rank % 500));
  return { x: R * Math.cos(a) + r * Math.cos(t), y: R * Math.sin(a) + r * Math.sin(t) };
}

/**
 * Labels render at 12-16 px whatever the zoom, and how many are shown grows with the zoom: about
 * the 25 highest-degree nodes at overview, more as the user zooms in (labelled = rank < budget).
 * Cytoscape's own min-zoomed-font-size rounds the zoom to a power of two, too coarse for this.
 */
let fitZoom = 1;
let labelledZoom = 0;

function sizeLabels(force) {
  const z = cy.zoom();
  if (!force && Math.abs(z - labelledZoom) / labelledZoom < 0.03) return;
  labelledZoom = z;
  const budget = Math.max(8, Math.round(25 * (z / fitZoom) ** 2));
  cy.batch(() =>
    cy.nodes().forEach((n) => {
      const r = n.data("rank");
      n.data("font", (r < 5 ? 16 : r < 30 ? 14 : 12) / z);
      if (r < budget) n.addClass("labelled");
      else n.removeClass("labelled");
    }),
  );
}

let labelFrame = 0;
cy.on("zoom", () => {
  if (!labelFrame) labelFrame = requestAnimationFrame(() => ((labelFrame = 0), sizeLabels(false)));
});

function setCounts(nodes, edges, summarised) {
  state.nodeCount = nodes;
  state.edgeCount = edges;
  state.summarised = summarised;
}

function renderLegend(communities) {
  const ul = document.querySelector("#legend ul");
  ul.replaceChildren();
  for (const c of communities) {
    const li = document.createElement("li");
    const sw = document.createElement("span");
    sw.className = "sw";
    sw.style.background = colourOf(c.id);
    const name = document.createElement("span");
    name.className = "name";
    name.textContent = c.name;
    name.title = c.name;
    const n = document.createElement("span");
    n.className = "n";
    n.textContent = String(c.size);
    li.append(sw, name, n);
    li.addEventListener("mouseenter", () => focusCommunity(c.id));
    li.addEventListener("mouseleave", () => focusCommunity(null));
    li.addEventListener("click", () => cy.animate({ fit: { eles: cy.nodes(`[community = ${c.id}]`), padding: 60 }, duration: 300 }));
    ul.append(li);
  }
}

function focusCommunity(id) {
  cy.batch(() => {
    cy.elements().removeClass("dim");
    if (id === null) return;
    cy.nodes(`[community != ${id}]`).addClass("dim");
    cy.edges().filter((e) => e.source().data("community") !== id || e.target().data("community") !== id).addClass("dim");
  });
}

function showMessage(text) {
  const el = document.getElementById("message");
  el.hidden = !text;
  el.textContent = text || "";
}

// ---- pulses -------------------------------------------------------------------------------------

const pulseTimers = new Map();

function pulse(ids) {
  const at = Date.now();
  for (const id of ids) {
    const node = cy.getElementById(id);
    if (node.empty()) continue;
    node.addClass("pulse");
    clearTimeout(pulseTimers.get(id));
    pulseTimers.set(
      id,
      setTimeout(() => {
        node.removeClass("pulse");
        pulseTimers.delete(id);
      }, PULSE_MS),
    );
    state.pulses.push({ id, at });
  }
  if (state.pulses.length > MAX_PULSES) state.pulses.splice(0, state.pulses.length - MAX_PULSES);
}

/** The server resolves targets against the full graph; match here too in case it could not. */
function targetsOf(msg) {
  if (msg.targets && msg.targets.length) return msg.targets;
  const out = new Set();
  const named = new Set();
  for (const id of msg.event.nodes || []) {
    const n = cy.getElementById(id);
    if (n.empty()) continue;
    out.add(id);
    named.add(n.data("file"));
  }
  // A file lights all its nodes only when the event names none of them (an edit, a watch batch).
  const files = new Set((msg.event.files || []).filter((f) => !named.has(f)));
  if (files.size) cy.nodes().forEach((n) => files.has(n.data("file")) && out.add(n.id()));
  return [...out];
}

// ---- activity log -------------------------------------------------------------------------------

function logEvent(event, fresh) {
  const ol = document.querySelector("#activity ol");
  const li = document.createElement("li");
  if (fresh) li.className = "fresh";
  const t = document.createElement("span");
  t.className = "t";
  t.textContent = new Date(event.ts).toLocaleTimeString();
  const src = document.createElement("span");
  src.className = "src";
  src.textContent = `${event.source}:${event.pid}`;
  const what = document.createElement("span");
  what.className = "what";
  what.textContent = event.tool ? `${event.kind} ${event.tool}` : event.kind;
  const text = document.createElement("span");
  text.className = "text";
  text.textContent = event.text ? ` “${event.text}”` : "";
  const n = document.createElement("span");
  n.className = "n";
  const parts = [];
  if (event.nodes && event.nodes.length) parts.push(`${event.nodes.length} node${event.nodes.length > 1 ? "s" : ""}`);
  if (event.files && event.files.length) parts.push(`${event.files.length} file${event.files.length > 1 ? "s" : ""}`);
  if (event.ok === false) parts.push("failed");
  n.textContent = parts.length ? ` · ${parts.join(", ")}` : "";
  li.title = [event.text || "", ...(event.nodes || []), ...(event.files || [])].filter(Boolean).slice(0, 21).join("\n");
  li.append(t, src, what, text, n);
  ol.prepend(li);
  while (ol.children.length > MAX_LOG) ol.lastElementChild.remove();
}

// ---- stream -------------------------------------------------------------------------------------

let backoff = 500;

function connect() {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/events`);
    const conn = document.getElementById("conn");
    ws.onopen = () => {
      backoff = 500;
      state.connected = true;
      conn.className = "on";
      resolve();
    };
    ws.onmessage = (m) => {
      let msg;
      try {
        msg = JSON.parse(m.data);
      } catch {
        return;
      }
      if (msg.type === "backlog") for (const e of msg.events) logEvent(e, false);
      else if (msg.type === "graph") loadGraph();
      else if (msg.type === "event") {
        state.events++;
        state.lastEvent = msg.event;
        logEvent(msg.event, true);
        pulse(targetsOf(msg));
      }
    };
    ws.onclose = () => {
      state.connected = false;
      conn.className = "off";
      resolve();
      // The server may be restarting: try again, slower each time, and refetch what we missed.
      setTimeout(() => connect().then(() => state.connected && loadGraph()), backoff);
      backoff = Math.min(backoff * 2, 10000);
    };
  });
}

(async () => {
  await loadGraph();
  await connect();
  state.ready = true;
})();

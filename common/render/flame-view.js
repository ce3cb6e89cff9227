/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The flame graph on a canvas, with the SVG's zoom, search and details line:
 * one object both HTML pages use (flame-html.js, the flame graph page;
 * heatmap-html.js, the range flame graph under a heat map). Embedded
 * verbatim at build time before the page's script; it must never contain a
 * closing script tag or a comment opener, which embed.py checks.
 *
 *   var view = FgFlameView(FgFlameView.elements(), meta, hooks);
 *   view.setData(d);   // and again for another graph
 *
 * els: the page's elements: canvas, details, matched, unzoom, search,
 * ignorecase; FgFlameView.elements() finds those of the markup
 * flame-view.c writes. meta: how frames are drawn: width, frameHeight,
 * fontSize, fontType, fontWidth, inverted, bgTop, bgBottom, countName,
 * nameType.
 * The graph is meta.width px wide, or as wide as the canvas's parent where
 * that is narrower, and follows the parent's width as the window resizes.
 * hooks (optional): onchange() after the zoom or search changed by the
 * user (to keep the URL), onsearch(term) as a search begins or is reset
 * (null).
 *
 * d, a graph: parallel arrays indexed by frame in pre-order (see
 * flame-html.c): names (display names), name, depth, gap, value, other
 * (differential only), color (index into colors, CSS colours); and total
 * (the 100% figure), treeTotal, totalOther, maxDepth, diff, otherIsAfter,
 * and optionally otherName (what the details line calls the other profile;
 * default "before", or "after" with otherIsAfter).
 *
 * Frames are kept in typed arrays, so a frame's subtree is the range
 * [i, end[i]). Drawing walks the zoomed frame's subtree and skips the
 * subtree of any frame narrower than MIN_DRAW px, so its cost follows what
 * is visible.
 */
function FgFlameView(els, meta, hooks) {
"use strict";

var XPAD = 10, MIN_DRAW = 0.1, MIN_WIDTH = 100;
var SEARCH_FILL = "rgb(230,0,230)";
var M = meta, H_ = hooks || {};
var canvas = els.canvas, ctx = canvas.getContext("2d");
var W = M.width, FULL = W - 2 * XPAD, FH = M.frameHeight, FPAD = FH >= 4 ? 1 : 0;
var FONT = M.fontSize + "px " + M.fontType;

/* The graph: set by setData(). */
var G = null, names = [], N = 0, nameOf, depth, value, other, colorOf, colors = [];
var start, parent, end, H = 4;

var zoomed = 0, hovered = -1, searching = null, ignorecase = false;
var matched = null; /* Uint8Array per frame while searching */
var dpr = 1, background = null;
/* The frames of the last draw, for hit-testing by hooks. */
var nDrawn = 0, dIdx = new Int32Array(0), dX = new Float64Array(0), dW = new Float64Array(0);
var dFaded = new Uint8Array(0);
var drawMs = 0, drawCount = 0;

function fmtCount(v) {
	var s = v === Math.floor(v) ? v.toFixed(0) : v.toFixed(2);
	var dot = s.indexOf("."), ip = dot < 0 ? s : s.substring(0, dot), rest = dot < 0 ? "" : s.substring(dot);
	var out = "";
	for (var i = 0; i < ip.length; i++) {
		if (i > 0 && (ip.length - i) % 3 === 0)
			out += ",";
		out += ip[i];
	}
	return out + rest;
}

function pct(part, whole) {
	return (whole > 0 ? 100 * part / whole : 0).toFixed(2);
}

/* What the full width stands for: a zoomed frame, or the 100% figure (--total). */
function span(z) {
	return z > 0 ? value[z] : Math.max(value[0], G.total);
}

/* The label for a frame w px wide, cut with ".." as the SVG renderer cuts it. */
function fit(name, w) {
	var chars = Math.floor(w / (M.fontSize * M.fontWidth));
	if (chars < 3)
		return "";
	var cps = Array.from(name);
	if (cps.length <= chars)
		return name;
	return cps.slice(0, chars - 2).join("") + "..";
}

function frameTop(d) {
	return M.inverted ? 2 + d * FH : H - 2 - (d + 1) * FH + FPAD;
}

/*
 * The width the graph takes: its parent's, up to meta.width, and at least
 * MIN_WIDTH so that frames keep some room. A parent of no width (hidden)
 * says nothing, so the graph keeps meta.width until shown.
 */
function fitWidth() {
	var room = canvas.parentNode ? canvas.parentNode.clientWidth : 0;
	return room > 0 ? Math.max(MIN_WIDTH, Math.min(M.width, room)) : M.width;
}

/* The device pixel ratio, as far as the canvas's size limit allows. */
function ratioFor(w) {
	return Math.max(0.1, Math.min(window.devicePixelRatio || 1, 32767 / H, 32767 / w));
}

function setupCanvas() {
	W = fitWidth();
	FULL = W - 2 * XPAD;
	dpr = ratioFor(W);
	canvas.width = Math.round(W * dpr);
	canvas.height = Math.round(H * dpr);
	canvas.style.width = W + "px";
	canvas.style.height = H + "px";
	background = ctx.createLinearGradient(0, 0, 0, H);
	background.addColorStop(0.05, M.bgTop);
	background.addColorStop(0.95, M.bgBottom);
}

/* Takes graph d: starts from the gaps, parents and subtree ends from the depths. */
function setData(d) {
	G = d;
	names = d.names;
	N = d.name.length;
	nameOf = Int32Array.from(d.name);
	depth = Int32Array.from(d.depth);
	value = Float64Array.from(d.value);
	other = d.other ? Float64Array.from(d.other) : value;
	colorOf = Int32Array.from(d.color);
	colors = d.colors;
	start = new Float64Array(N);
	parent = new Int32Array(N);
	end = new Int32Array(N);
	var next = new Float64Array(d.maxDepth + 2), open = [];
	for (var i = 0; i < N; i++) {
		var dp = depth[i];
		start[i] = next[dp] + d.gap[i];
		next[dp] = start[i] + value[i];
		next[dp + 1] = start[i];
		while (open.length > dp)
			end[open.pop()] = i;
		parent[i] = open.length ? open[open.length - 1] : -1;
		open.push(i);
	}
	while (open.length)
		end[open.pop()] = N;
	dIdx = new Int32Array(N);
	dX = new Float64Array(N);
	dW = new Float64Array(N);
	dFaded = new Uint8Array(N);
	H = (N ? d.maxDepth + 1 : 1) * FH + 4;
	zoomed = 0;
	hovered = -1;
	els.unzoom.hidden = true;
	setupCanvas();
	if (searching !== null)
		search(searching, false);
	draw();
}

function fillOf(i) {
	return matched && matched[i] ? SEARCH_FILL : colors[colorOf[i]];
}

function drawFrame(i, x, w, faded) {
	var y = frameTop(depth[i]);
	ctx.globalAlpha = faded ? 0.5 : 1;
	ctx.fillStyle = fillOf(i);
	ctx.fillRect(x, y, w, FH - FPAD);
	var label = fit(names[nameOf[i]], w);
	if (label) {
		ctx.fillStyle = "#000";
		ctx.fillText(label, x + 3, y + (FH - FPAD) / 2);
	}
	dIdx[nDrawn] = i;
	dX[nDrawn] = x;
	dW[nDrawn] = w;
	dFaded[nDrawn] = faded ? 1 : 0;
	nDrawn++;
}

function draw() {
	var t = performance.now();
	ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
	ctx.globalAlpha = 1;
	ctx.fillStyle = background;
	ctx.fillRect(0, 0, W, H);
	ctx.font = FONT;
	ctx.textBaseline = "middle";
	nDrawn = 0;
	if (N > 0) {
		/* The zoomed frame's ancestors stay as faded full-width bars. */
		for (var p = parent[zoomed]; p >= 0; p = parent[p])
			drawFrame(p, XPAD, FULL, true);
		var z0 = start[zoomed], scale = FULL / span(zoomed);
		for (var j = zoomed, e = end[zoomed]; j < e;) {
			var w = value[j] * scale;
			if (!(w >= MIN_DRAW)) {
				j = end[j];
				continue;
			}
			drawFrame(j, XPAD + (start[j] - z0) * scale, w, false);
			j++;
		}
		if (hovered >= 0) {
			for (var k = 0; k < nDrawn; k++)
				if (dIdx[k] === hovered) {
					ctx.globalAlpha = 1;
					ctx.strokeStyle = "#000";
					ctx.lineWidth = 0.5;
					ctx.strokeRect(dX[k], frameTop(depth[hovered]), dW[k], FH - FPAD);
				}
		}
	}
	drawMs = performance.now() - t;
	drawCount++;
}

var drawPending = false;
function redraw() {
	if (drawPending)
		return;
	drawPending = true;
	window.requestAnimationFrame(function () {
		drawPending = false;
		draw();
	});
}

/* The frame drawn at (px, py) in CSS px within the canvas, or -1. */
function hit(px, py) {
	if (N === 0)
		return -1;
	var d = M.inverted ? Math.floor((py - 2) / FH) : Math.floor((H - 2 - py) / FH);
	if (d < 0 || d > G.maxDepth || px < XPAD || px >= XPAD + FULL)
		return -1;
	var top = frameTop(d);
	if (py < top || py >= top + FH - FPAD)
		return -1;
	if (d < depth[zoomed]) {
		var a = zoomed;
		while (depth[a] > d)
			a = parent[a];
		return a;
	}
	var scale = FULL / span(zoomed), x = start[zoomed] + (px - XPAD) / scale, n = zoomed;
	while (depth[n] < d) {
		var c = n + 1, found = -1;
		while (c < end[n]) {
			if (x >= start[c] && x < start[c] + value[c]) {
				found = c;
				break;
			}
			c = end[c];
		}
		if (found < 0)
			return -1;
		n = found;
	}
	return value[n] * scale >= MIN_DRAW ? n : -1;
}

function detailsOf(i) {
	var s = M.nameType + " " + names[nameOf[i]] + " (" + fmtCount(value[i]) + " " + M.countName +
		", " + pct(value[i], G.total) + "%";
	if (G.diff) {
		var theirs = G.totalOther > 0 ? other[i] / G.totalOther : 0;
		var grown = G.otherIsAfter ? other[i] - value[i] : value[i] - other[i];
		var change = G.treeTotal > 0 ? 100 * grown / G.treeTotal : 0;
		s += "; " + (G.otherName || (G.otherIsAfter ? "after" : "before")) + ": " + fmtCount(other[i]) + ", " +
			(100 * theirs).toFixed(2) + "%; change " + (change >= 0 ? "+" : "") + change.toFixed(2) + "%";
	}
	if (zoomed > 0 && i >= zoomed && i < end[zoomed])
		s += ", " + pct(value[i], value[zoomed]) + "% of zoomed frame";
	return s + ")";
}

function setHovered(k) {
	if (k === hovered)
		return;
	hovered = k;
	els.details.textContent = k >= 0 ? detailsOf(k) : " ";
	redraw();
}

function zoom(k) {
	zoomed = k > 0 && k < N ? k : 0;
	els.unzoom.hidden = zoomed === 0;
	draw();
}

function changed() {
	if (H_.onchange)
		H_.onchange();
}

function showIgnorecase() {
	els.ignorecase.classList.toggle("show", ignorecase);
	els.ignorecase.setAttribute("aria-pressed", ignorecase ? "true" : "false");
}

function resetSearch() {
	matched = null;
	searching = null;
	els.search.classList.remove("show");
	els.search.textContent = "Search";
	els.matched.textContent = " ";
	if (H_.onsearch)
		H_.onsearch(null);
}

/* Highlights every match; the percentage counts each sample once, so a
 * match inside a matched frame's subtree adds nothing. */
function search(term, redrawNow) {
	var re;
	try {
		re = new RegExp(term, ignorecase ? "i" : "");
	} catch (err) {
		els.matched.textContent = "Invalid regexp";
		return;
	}
	var hitName = new Uint8Array(names.length);
	for (var k = 0; k < names.length; k++)
		hitName[k] = re.test(names[k]) ? 1 : 0;
	matched = new Uint8Array(N);
	var sum = 0, until = 0;
	for (var j = 0; j < N; j++) {
		if (!hitName[nameOf[j]])
			continue;
		matched[j] = 1;
		if (j >= until) {
			sum += value[j];
			until = end[j];
		}
	}
	searching = term;
	els.search.classList.add("show");
	els.search.textContent = "Reset Search";
	els.matched.textContent = "Matched: " + (N && G.total > 0 ? 100 * sum / G.total : 0).toFixed(1) + "%";
	if (redrawNow !== false)
		draw();
}

function searchPrompt() {
	var term = prompt("Enter a search term (regexp allowed, eg: ^ext4_)" +
			  (ignorecase ? ", ignoring case" : "") + "; Ctrl-I toggles case", "");
	if (term !== null && term !== "") {
		if (H_.onsearch)
			H_.onsearch(term);
		search(term);
		changed();
	}
}

function toggleIgnorecase() {
	ignorecase = !ignorecase;
	showIgnorecase();
	if (searching !== null)
		search(searching);
	changed();
}

function canvasPoint(e) {
	var r = canvas.getBoundingClientRect();
	return [e.clientX - r.left, e.clientY - r.top];
}

canvas.addEventListener("mousemove", function (e) {
	var p = canvasPoint(e);
	setHovered(hit(p[0], p[1]));
});
canvas.addEventListener("mouseleave", function () {
	setHovered(-1);
});
canvas.addEventListener("click", function (e) {
	var p = canvasPoint(e), k = hit(p[0], p[1]);
	if (k < 0)
		return;
	zoom(k);
	els.details.textContent = detailsOf(k);
	changed();
});
els.unzoom.addEventListener("click", function () {
	zoom(0);
	changed();
});
els.search.addEventListener("click", function () {
	if (searching !== null) {
		resetSearch();
		draw();
		changed();
	} else {
		searchPrompt();
	}
});
els.ignorecase.addEventListener("click", toggleIgnorecase);

/*
 * A resized window, or one moved to a screen of another pixel ratio, gets
 * the same view refitted: frames keep their places relative to the width,
 * and the zoom, search and hover stay. Resizing the canvas clears it, so
 * nothing is resized when nothing changed. The parent is watched as well
 * as the window: a scroll bar that comes or goes narrows it without a
 * resize event.
 */
function refit() {
	var w = fitWidth();
	if (!G || (w === W && ratioFor(w) === dpr))
		return;
	setupCanvas();
	draw();
}
window.addEventListener("resize", refit);
if (window.ResizeObserver && canvas.parentNode)
	new ResizeObserver(refit).observe(canvas.parentNode);

/* The view as URL parameters: n the zoomed frame, s the search, i=1 to ignore case. */
function saveTo(p) {
	["n", "s", "i"].forEach(function (k) { p.delete(k); });
	if (zoomed > 0)
		p.set("n", String(zoomed));
	if (searching !== null)
		p.set("s", searching);
	if (ignorecase)
		p.set("i", "1");
}

/* Restores what saveTo() kept, for the graph set last. */
function restoreFrom(p) {
	ignorecase = p.get("i") === "1";
	showIgnorecase();
	var n = p.get("n");
	if (n !== null && /^[0-9]+$/.test(n))
		zoomed = parseInt(n, 10) < N ? parseInt(n, 10) : 0;
	els.unzoom.hidden = zoomed === 0;
	if (p.get("s"))
		search(p.get("s"), false);
	draw();
}

function drawnFrame(k) {
	var i = dIdx[k];
	return { index: i, name: names[nameOf[i]], depth: depth[i], x: dX[k], y: frameTop(depth[i]),
		 width: dW[k], height: FH - FPAD, fill: fillOf(i), label: fit(names[nameOf[i]], dW[k]),
		 faded: dFaded[k] === 1, value: value[i] };
}

return {
	setData: setData,
	draw: draw,
	zoom: zoom,
	search: search,
	resetSearch: function () {
		resetSearch();
		draw();
	},
	searchPrompt: searchPrompt,
	toggleIgnorecase: toggleIgnorecase,
	/*
	 * A page's keydown: Ctrl-F and F3 search the graph instead of the
	 * browser's find bar, Ctrl-I toggles case. True if the key was the view's.
	 */
	searchKey: function (e) {
		if (e.keyCode === 114 || (e.ctrlKey && (e.keyCode === 70 || e.key === "f" || e.key === "F"))) {
			e.preventDefault();
			searchPrompt();
			return true;
		}
		if (e.ctrlKey && (e.keyCode === 73 || e.key === "i" || e.key === "I")) {
			e.preventDefault();
			toggleIgnorecase();
			return true;
		}
		return false;
	},
	/* The top of depth d's row, in CSS px within the canvas. */
	rowTop: frameTop,
	saveTo: saveTo,
	restoreFrom: restoreFrom,
	fmtCount: fmtCount,
	pct: pct,
	get drawMs() { return drawMs; },
	get drawCount() { return drawCount; },
	/* Test hooks: what was drawn, where, and the view's state. */
	frames: function () {
		var out = [];
		for (var k = 0; k < nDrawn; k++)
			out.push(drawnFrame(k));
		return out;
	},
	/* The viewport box of the first drawn frame named name, or null. */
	frameRect: function (name) {
		var r = canvas.getBoundingClientRect();
		for (var k = 0; k < nDrawn; k++) {
			if (names[nameOf[dIdx[k]]] !== name)
				continue;
			var f = drawnFrame(k);
			return { x: r.left + f.x, y: r.top + f.y, width: f.width, height: f.height,
				 cx: r.left + f.x + f.width / 2, cy: r.top + f.y + f.height / 2 };
		}
		return null;
	},
	state: function () {
		return { zoomed: zoomed, search: searching, ignorecase: ignorecase,
			 matched: els.matched.textContent, details: els.details.textContent,
			 frames: N, names: names.length };
	},
};
}

/*
 * The view's elements in the markup both pages write (flame-view.c): the
 * graph's canvas, its controls and its status line, for FgFlameView()'s els.
 */
FgFlameView.elements = function () {
	function byId(id) {
		return document.getElementById(id);
	}
	return {
		canvas: byId("flame"),
		details: byId("details"),
		matched: byId("matched"),
		unzoom: byId("unzoom"),
		search: byId("search"),
		ignorecase: byId("ignorecase"),
	};
};

/* The page's URL parameters, or null where the viewer cannot say. */
FgFlameView.urlParams = function () {
	try {
		return new URLSearchParams(window.location.search);
	} catch (err) {
		return null;
	}
};

/* Puts p in the URL without reloading, so a link shows the same view. */
FgFlameView.replaceUrl = function (p) {
	var q = p.toString();
	try {
		history.replaceState(null, "", window.location.pathname + (q ? "?" + q : "") + window.location.hash);
	} catch (err) {
		/* Some viewers forbid it; the page still works. */
	}
};

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The SVG flame graph's script (see flame.c for the markup it relies on):
 * zoom, reset, search, hover and the URL state. Embedded at build time by
 * embed.py --svg, which leaves these leading comments out of the graph:
 * the script starts at its first line of code. flame.c prints the few
 * parameters it needs before it (fontsize, fontwidth, frameheight,
 * inverted, total, xpad, fullwidth), and only as numbers, so nothing from
 * the model or the options can reach it. It holds no '<' and no '&'
 * (comparisons face the other way; "a ? b : false" for "a && b"): it is
 * the same text to an XML parser and to an HTML one, so it needs no CDATA
 * section; embed.py --svg fails the build otherwise, and test-flame checks.
 */
var svg, framesg, details, unzoombtn, searchbtn, icbtn, matchedtxt, nametype, countname;
var nodes = [], zoomed = 0, searching = null, ignorecase = false;

/* "name (1,234 samples, ...)": cut at the last " COUNTNAME, ", then at the
 * last " (" before it; names and the count name may hold anything. */
function parse_title(s) {
	var p = s.lastIndexOf(" " + countname + ", ");
	var head = p >= 0 ? s.substring(0, p) : s;
	var q = head.lastIndexOf(" (");
	if (0 > q)
		return { name: s, count: 0 };
	return { name: head.substring(0, q),
		 count: parseFloat(head.substring(q + 2).replace(/,/g, "")) || 0 };
}

function init(evt) {
	svg = document.documentElement;
	framesg = document.getElementById("frames");
	details = document.getElementById("details");
	unzoombtn = document.getElementById("unzoom");
	searchbtn = document.getElementById("search");
	icbtn = document.getElementById("ignorecase");
	matchedtxt = document.getElementById("matched");
	nametype = details.getAttribute("data-name-type");
	countname = details.getAttribute("data-count-name");

	/* Frames come in pre-order; depth follows from y, so a stack of open
	 * frames gives each its parent and the end of its subtree. */
	var gs = framesg.children, open = [], rooty = 0;
	for (var i = 0; gs.length > i; i++) {
		var g = gs[i];
		var r = g.getElementsByTagName("rect")[0];
		var t = g.getElementsByTagName("text")[0];
		var ti = g.getElementsByTagName("title")[0];
		if (!r || !t || !ti)
			continue;
		var pt = parse_title(ti.textContent);
		var y = parseFloat(r.getAttribute("y"));
		var k = nodes.length;
		if (k === 0)
			rooty = y;
		var depth = Math.max(0, Math.round((inverted ? y - rooty : rooty - y) / frameheight));
		while (open.length > depth)
			nodes[open.pop()].end = k;
		nodes.push({ g: g, rect: r, text: t, ti: ti, title: ti.textContent,
			name: pt.name, count: pt.count,
			x: parseFloat(r.getAttribute("x")), w: parseFloat(r.getAttribute("width")),
			x_attr: r.getAttribute("x"), y_attr: r.getAttribute("y"),
			w_attr: r.getAttribute("width"), tx_attr: t.getAttribute("x"),
			label: t.textContent, fill: r.getAttribute("fill"),
			parent: open.length ? open[open.length - 1] : -1, end: 0 });
		g.fg_index = k;
		open.push(k);
	}
	while (open.length)
		nodes[open.pop()].end = nodes.length;

	framesg.addEventListener("click", function (e) {
		var k = frame_of(e.target);
		if (k >= 0) {
			zoom(k);
			update_url();
		}
	});
	framesg.addEventListener("mouseover", function (e) {
		var k = frame_of(e.target);
		if (k >= 0)
			details.textContent = nametype + " " + nodes[k].ti.textContent;
	});
	framesg.addEventListener("mouseout", function (e) {
		details.textContent = " ";
	});
	unzoombtn.addEventListener("click", function () {
		unzoom();
		update_url();
	});
	searchbtn.addEventListener("click", search_toggle);
	icbtn.addEventListener("click", toggle_ignorecase);
	window.addEventListener("keydown", function (e) {
		/* Ctrl-F and F3 search here instead of the browser's find bar; Ctrl-I toggles case. */
		if (e.keyCode === 114 || (e.ctrlKey ? e.keyCode === 70 || e.key === "f" || e.key === "F" : false)) {
			e.preventDefault();
			search_prompt();
		} else if (e.ctrlKey ? e.keyCode === 73 || e.key === "i" || e.key === "I" : false) {
			e.preventDefault();
			toggle_ignorecase();
		}
	});
	restore_url();
	/* Opened on its own and taller than the window, a flame graph shows its base first,
	 * where its roots are and where it is read from; an icicle's base is its top. */
	if (!inverted ? svg.localName === "svg" : false)
		window.scrollTo(0, svg.scrollHeight || 1e9);
}

function frame_of(el) {
	for (; el ? el !== framesg : false; el = el.parentNode)
		if (el.fg_index !== undefined)
			return el.fg_index;
	return -1;
}

/* The view lives in the URL's parameters x, y, s and i, so a link shares it.
 * x and y are the zoomed frame's rect attributes, as written. */
function url_params() {
	try {
		return new URLSearchParams(window.location.search);
	} catch (err) {
		return null;
	}
}

function update_url() {
	var p = url_params();
	if (!p)
		return;
	["x", "y", "s", "i"].forEach(function (k) { p.delete(k); });
	if (zoomed > 0) {
		p.set("x", nodes[zoomed].x_attr);
		p.set("y", nodes[zoomed].y_attr);
	}
	if (searching !== null)
		p.set("s", searching);
	if (ignorecase)
		p.set("i", "1");
	var q = p.toString();
	try {
		history.replaceState(null, "", window.location.pathname + (q ? "?" + q : "") +
				    window.location.hash);
	} catch (err) {
		/* Some viewers forbid it; the view still works. */
	}
}

function restore_url() {
	var p = url_params();
	if (!p)
		return;
	ignorecase = p.get("i") === "1";
	icbtn.classList.toggle("show", ignorecase);
	if (p.has("x") ? p.has("y") : false) {
		for (var j = 1; nodes.length > j; j++)
			if (nodes[j].x_attr === p.get("x") ? nodes[j].y_attr === p.get("y") : false) {
				zoom(j);
				break;
			}
	}
	if (p.get("s"))
		search(p.get("s"));
}

/* The label for a frame w px wide, cut as the renderer cuts it. */
function fit(name, w) {
	var chars = Math.floor(w / (fontsize * fontwidth));
	if (3 > chars)
		return "";
	var cps = Array.from(name);
	if (chars >= cps.length)
		return name;
	return cps.slice(0, chars - 2).join("") + "..";
}

function place(n, x, w) {
	n.rect.setAttribute("x", x.toFixed(2));
	n.rect.setAttribute("width", w.toFixed(2));
	n.text.setAttribute("x", (x + 3).toFixed(2));
	n.text.textContent = fit(n.name, w);
}

/* The frame takes the full width, its descendants scale with it, its
 * ancestors stay as faded full-width bars and everything else hides.
 * Tooltips in the zoomed subtree add their share of the zoomed frame. */
function zoom(k) {
	if (k === 0) {
		unzoom();
		return;
	}
	var z = nodes[k], x0 = xpad, full = fullwidth;
	var scale = full / z.w, anc = {};
	for (var p = z.parent; p >= 0; p = nodes[p].parent)
		anc[p] = true;
	for (var j = 0; nodes.length > j; j++) {
		var n = nodes[j];
		if (anc[j]) {
			n.g.classList.remove("hide");
			n.g.classList.add("parent");
			place(n, x0, full);
			n.ti.textContent = n.title;
		} else if (j >= k ? z.end > j : false) {
			n.g.classList.remove("hide", "parent");
			place(n, x0 + (n.x - z.x) * scale, n.w * scale);
			var pct = z.count > 0 ? 100 * n.count / z.count : 0;
			n.ti.textContent = n.title.substring(0, n.title.length - 1) + ", " +
				pct.toFixed(2) + "% of zoomed frame)";
		} else {
			n.g.classList.add("hide");
		}
	}
	zoomed = k;
	unzoombtn.classList.remove("hide");
}

function unzoom() {
	for (var j = 0; nodes.length > j; j++) {
		var n = nodes[j];
		n.g.classList.remove("hide", "parent");
		n.rect.setAttribute("x", n.x_attr);
		n.rect.setAttribute("width", n.w_attr);
		n.text.setAttribute("x", n.tx_attr);
		n.text.textContent = n.label;
		n.ti.textContent = n.title;
	}
	zoomed = 0;
	unzoombtn.classList.add("hide");
}

function search_toggle() {
	if (searching !== null) {
		reset_search();
		update_url();
	} else {
		search_prompt();
	}
}

function search_prompt() {
	var term = prompt("Enter a search term (regexp allowed, eg: ^ext4_)" +
			  (ignorecase ? ", ignoring case" : "") + "; Ctrl-I toggles case", "");
	if (term !== null ? term !== "" : false) {
		search(term);
		update_url();
	}
}

function toggle_ignorecase() {
	ignorecase = !ignorecase;
	icbtn.classList.toggle("show", ignorecase);
	if (searching !== null)
		search(searching);
	update_url();
}

function reset_search() {
	for (var j = 0; nodes.length > j; j++)
		nodes[j].rect.setAttribute("fill", nodes[j].fill);
	searching = null;
	searchbtn.classList.remove("show");
	searchbtn.textContent = "Search";
	matchedtxt.textContent = " ";
}

/* Highlights every match; the percentage counts each sample once, so a
 * match inside a matched frame's subtree adds nothing. */
function search(term) {
	var re;
	try {
		re = new RegExp(term, ignorecase ? "i" : "");
	} catch (err) {
		matchedtxt.textContent = "Invalid regexp";
		return;
	}
	reset_search();
	var sum = 0, until = 0;
	for (var j = 0; nodes.length > j; j++) {
		var n = nodes[j];
		if (!re.test(n.name))
			continue;
		n.rect.setAttribute("fill", "rgb(230,0,230)");
		if (j >= until) {
			sum += n.count;
			until = n.end;
		}
	}
	searching = term;
	searchbtn.classList.add("show");
	searchbtn.textContent = "Reset Search";
	var pct = total > 0 ? 100 * sum / total : 0;
	matchedtxt.textContent = "Matched: " + pct.toFixed(1) + "%";
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "render/flame-view.h"
#include "render/flame-view-js.h"

static const char style[] =
	"#controls, #status { display: flex; justify-content: space-between; align-items: center;"
	" min-height: 22px; }\n"
	"#controls button { font: inherit; cursor: pointer; }\n"
	"#ignorecase { opacity: 0.4; }\n"
	"#ignorecase.show, #ignorecase:hover { opacity: 1; }\n"
	"#search.show { font-weight: bold; }\n"
	"#flame { display: block; cursor: pointer; }\n"
	"#details { white-space: pre; overflow: hidden; text-overflow: ellipsis; }\n"
	"#matched { white-space: pre; margin-left: 12px; }\n";

void fg_flame_view_put_style(struct fg_outbuf *o)
{
	fg_outbuf_put(o, style, sizeof(style) - 1);
}

void fg_flame_view_put_controls(struct fg_outbuf *o)
{
	fg_outbuf_puts(o, "<div id=\"controls\"><span><button id=\"unzoom\" type=\"button\" hidden>"
			  "Reset Zoom</button></span><span><button id=\"search\" type=\"button\">"
			  "Search</button> <button id=\"ignorecase\" type=\"button\""
			  " aria-pressed=\"false\" title=\"Ignore case (Ctrl-I)\">ic</button>"
			  "</span></div>\n");
}

void fg_flame_view_put_canvas(struct fg_outbuf *o)
{
	fg_outbuf_puts(o, "<canvas id=\"flame\"></canvas>\n"
			  "<div id=\"status\"><span id=\"details\"> </span>"
			  "<span id=\"matched\"> </span></div>\n");
}

void fg_flame_view_put_script(struct fg_outbuf *o)
{
	fg_outbuf_put(o, flame_view_js, sizeof(flame_view_js) - 1);
}

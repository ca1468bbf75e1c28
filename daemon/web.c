#include "web.h"

#include <stdio.h>
#include <string.h>

#include "banned.h"

static int segment_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || s[0] == '.')
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
		      c == '_' || c == '-'))
			return 0;
	}
	return 1;
}

int web_resolve(const char *dir, const char *url, char *buf, size_t len)
{
	const char *p = url, *last = url, *slash;
	int n;

	if (*p != '/')
		return -1;
	while (*p == '/')
		p++;
	if (!*p)
		goto index;
	for (; *p; p = slash + 1) {
		slash = strchr(p, '/');
		if (!slash)
			slash = p + strlen(p);
		if (!segment_ok(p, (size_t)(slash - p)))
			return -1;
		last = p;
		if (!*slash)
			break;
		if (slash[1] == '\0')	/* a trailing slash: a page */
			goto index;
	}
	if (!strchr(last, '.'))
		goto index;
	n = snprintf(buf, len, "%s%s", dir, url);
	return n < 0 || (size_t)n >= len ? -1 : 0;
index:
	n = snprintf(buf, len, "%s/index.html", dir);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

const char *web_content_type(const char *path)
{
	static const struct {
		const char *ext, *type;
	} types[] = {
		{ ".html", "text/html; charset=utf-8" },
		{ ".js", "text/javascript; charset=utf-8" },
		{ ".mjs", "text/javascript; charset=utf-8" },
		{ ".css", "text/css; charset=utf-8" },
		{ ".json", "application/json" },
		{ ".svg", "image/svg+xml" },
		{ ".png", "image/png" },
		{ ".ico", "image/x-icon" },
		{ ".map", "application/json" },
		{ ".txt", "text/plain; charset=utf-8" },
	};
	const char *dot = strrchr(path, '.');
	size_t i;

	if (dot && !strchr(dot, '/'))
		for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
			if (!strcmp(dot, types[i].ext))
				return types[i].type;
	return "application/octet-stream";
}

#include "web.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

/*
 * web/ also holds what builds the dashboard, not part of it: package.json,
 * package-lock.json and node_modules/ (whose files say which versions of
 * what are installed). Of node_modules/ only the files the pages load are
 * served (web/js/charts.js).
 */
static const char *const vendored[] = {
	"node_modules/uplot/dist/uPlot.esm.js",
	"node_modules/uplot/dist/uPlot.min.css",
};

/* rel: the URL path without its leading slashes */
static int served(const char *rel)
{
	const char *base = strrchr(rel, '/');
	size_t i;

	if (!strncmp(rel, "node_modules/", 13)) {
		for (i = 0; i < sizeof(vendored) / sizeof(vendored[0]); i++)
			if (!strcmp(rel, vendored[i]))
				return 1;
		return 0;
	}
	base = base ? base + 1 : rel;
	return strcmp(base, "package.json") && strcmp(base, "package-lock.json");
}

int web_resolve(const char *dir, const char *url, char *buf, size_t len)
{
	const char *p = url, *last = url, *slash, *rel;
	int n;

	if (*p != '/')
		return -1;
	while (*p == '/')
		p++;
	if (!*p)
		goto index;
	rel = p;
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
	if (!served(rel))
		return -1;
	n = snprintf(buf, len, "%s/%s", dir, rel);
	return n < 0 || (size_t)n >= len ? -1 : 0;
index:
	n = snprintf(buf, len, "%s/index.html", dir);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int web_open(const char *dir, const char *path)
{
	size_t dlen = strlen(dir);
	const char *p, *slash;
	char seg[256];
	int fd, next;

	if (strncmp(path, dir, dlen) || path[dlen] != '/')
		return -EINVAL;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (p = path + dlen + 1;; p = slash + 1) {
		slash = strchr(p, '/');
		if (!slash)
			break;
		if ((size_t)(slash - p) >= sizeof(seg)) {
			close(fd);
			return -ENAMETOOLONG;
		}
		memcpy(seg, p, (size_t)(slash - p));
		seg[slash - p] = '\0';
		next = openat(fd, seg, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		if (next < 0)
			return errno == ENOTDIR ? -ELOOP : -errno;
		fd = next;
	}
	/* O_NONBLOCK: a FIFO planted there must not hang the open */
	next = openat(fd, p, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	close(fd);
	return next < 0 ? -errno : next;
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

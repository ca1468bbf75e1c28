#ifndef TLBLAB_WEB_H
#define TLBLAB_WEB_H

#include <stddef.h>

/*
 * The dashboard's static files, served by tlblabd from a web/ directory next
 * to the API. A URL path maps to a file under that directory only when every
 * segment is made of [A-Za-z0-9._-] and none starts with a dot; a path whose
 * last segment has no extension is a page of the single-page app
 * (/jobs/12, /machines) and gets index.html, so dashboard links stay stable
 * URLs. What builds the dashboard is not served: package.json,
 * package-lock.json, node_modules/ but for the files the pages load (uPlot).
 * No symbolic link under the directory is followed (web_open), so a link
 * cannot lead out of it.
 */

/* Resolves url (an absolute URL path, without the query) under dir into
 * buf. Returns 0 and the file's path, or -1 when the path is not one this
 * server will serve (the caller answers 404). */
int web_resolve(const char *dir, const char *url, char *buf, size_t len);

/* Opens path, a web_resolve result under dir, read-only, following no
 * symbolic link below dir. Returns the descriptor (O_CLOEXEC, O_NONBLOCK;
 * the caller checks it is a regular file) or a negative errno (-ELOOP for
 * a link). */
int web_open(const char *dir, const char *path);

/* The Content-Type for path, by extension ("application/octet-stream" when
 * unknown). */
const char *web_content_type(const char *path);

#endif
